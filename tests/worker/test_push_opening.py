"""Opening a push, one statement at a time on both backends: the user's lock with the user, this
delivery's record with the repository's last sync, then, for a push that syncs, the index, the remembered
failures and the start record while the branch head is read under the lock. A delivery that cannot take
the lock writes nothing, an unfinished one counts one more attempt, and no thread of the head's read
outlives the push."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from function.errors import LockTimeout, SourcePermanentError, UnknownInstallation
from function.sources.port import FetchResult, RepoFile, RepoRef, Snapshot
from function.store.backends import is_mysql, open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.records import RememberedFailure
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync import Worker
from function.worker.sync.opening import PushOpening
from function.worker.sync.records import DeliveryRecorder
from tests.kit.blog_checks import delivery, served
from tests.kit.blog_fixtures import Blog, article
from tests.kit.builders import T0, apply_as_worker
from tests.kit.builders import article as parsed
from tests.kit.deliveries import delivery_uuid
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.kit.statements import count_statements

WAIT_S = 10.0  # a bound on waiting for the other side (a failing test ends then), never a timing check
HEAD = "a" * 40


class ListingSource:
    """A source whose branch head is ``HEAD`` with no files; it records the threads that read it."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def snapshot(self, repo: RepoRef) -> Snapshot:
        self.threads.append(threading.current_thread().name)
        return Snapshot(HEAD, ())

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        raise AssertionError("the opening fetches no file")


def push_of(installation_id: int = 1) -> PushRef:
    return PushRef(repository=REPO, branch="main", installation_id=installation_id, after=HEAD)


def delivery_of(delivery_id: str) -> DeliveryInfo:
    return DeliveryInfo(delivery_id=delivery_id, event="push", received_at=T0.replace(tzinfo=UTC))


def opening(store: PeeweeStore, source: ListingSource, *, now_s: int = 0) -> PushOpening:
    recorder = DeliveryRecorder(store.deliveries, lambda: T0 + timedelta(seconds=now_s))
    return PushOpening(store, source, recorder, lock_timeout_s=5, assets=None)


def finish(store: PeeweeStore, delivery_id: str) -> None:
    store.deliveries.finish_delivery(
        delivery_id, head_sha=HEAD, processed=1, succeeded=1, failed=0, archived=0, outcome="success",
        error=None, now=T0 + timedelta(seconds=5),
    )  # fmt: skip


def test_a_new_delivery_is_started_under_the_lock_and_sees_the_index(store: PeeweeStore) -> None:
    # GIVEN a user with two articles and a remembered failure
    user = store.users.add_user("alice", "a@example.com", 1, REPO)
    apply_as_worker(store, user.id, [parsed("a"), parsed("b")], [], T0)
    failure = RememberedFailure("bad", "articles/bad.md", "f" * 40, "no title")
    store.reconcile.remember_failures(user.id, [failure], [])
    source = ListingSource()

    # WHEN a push is opened
    with (
        count_statements(store.db) as seen,
        opening(store, source).locked(delivery_of("d-1"), push_of()) as locked,
    ):
        reads = seen.round_trips
        assert locked.previous is None and locked.last_sync is None
        with opening(store, source).started(locked.user, delivery_of("d-1"), push_of()) as started:
            known, head = started.known, started.head()
        opened = seen.round_trips

    # THEN the user, the index, the failures and the branch head are known, the start is recorded, and
    # on MariaDB each step was one ordinary statement: the lock with the user, the delivery's record with
    # the last sync; then the index, the failures and the start record (and the lock's release)
    assert locked.user.id == user.id
    assert set(known.index) == {"a", "b"} and known.failures["bad"].message == "no title"
    assert head.head_sha == HEAD and source.threads == ["head-read_0"]
    record = store.deliveries.get_delivery("d-1")
    assert record is not None and record.outcome == "processing" and record.attempts == 1
    if is_mysql(store.db):
        assert (reads, opened) == (2, 5), seen.statements
    # AND the lock is free once the block ended
    with store.locks.user_lock(user.id, 0):
        pass


def test_a_complete_delivery_and_the_last_sync_are_read_in_one_select(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1, REPO)
    source = ListingSource()
    with opening(store, source).locked(delivery_of("d-1"), push_of()) as locked:
        with opening(store, source).started(locked.user, delivery_of("d-1"), push_of()):
            finish(store, "d-1")
    before = store.deliveries.get_delivery("d-1")

    with (
        count_statements(store.db) as seen,
        opening(store, source).locked(delivery_of("d-1"), push_of()) as locked,
    ):
        pass

    # THEN the replay check and the duplicate check see it, and opening it wrote nothing
    assert locked.previous == before and locked.last_sync == before
    assert not [s for s in seen.statements if s.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert store.deliveries.get_delivery("d-1") == before


def test_an_unfinished_delivery_sent_again_counts_one_more_attempt(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1, REPO)
    source = ListingSource()
    for now_s in (0, 60):  # the first invocation died before finishing
        with opening(store, source, now_s=now_s).locked(delivery_of("d-1"), push_of()) as locked:
            with opening(store, source, now_s=now_s).started(locked.user, delivery_of("d-1"), push_of()):
                pass
    record = store.deliveries.get_delivery("d-1")
    assert locked.previous is not None and locked.previous.attempts == 1
    assert record is not None and record.attempts == 2 and record.outcome == "processing"
    assert T0 + timedelta(seconds=60) <= record.started_at < T0 + timedelta(seconds=61)


def test_an_unknown_installation_takes_no_lock_and_is_recorded_with_the_fix(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1, REPO)
    with pytest.raises(UnknownInstallation):
        with opening(store, ListingSource()).locked(delivery_of("d-9"), push_of(installation_id=9)):
            pass
    assert not store.holds_server_locks()
    record = store.deliveries.get_delivery("d-9")
    assert record is not None and record.outcome == "failed"
    assert record.error is not None and "blog-api users set-installation" in record.error


def test_a_delivery_that_cannot_take_the_lock_writes_nothing(db_url: str, store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1, REPO)
    held, done = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        other = PeeweeStore(open_database(db_url))
        with connection(other.db), other.locks.user_lock(user.id, 5):
            held.set()
            done.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert held.wait(10)
        recorder = DeliveryRecorder(store.deliveries, lambda: T0)
        impatient = PushOpening(store, ListingSource(), recorder, lock_timeout_s=0, assets=None)
        with pytest.raises(LockTimeout), impatient.locked(delivery_of("d-1"), push_of()):
            pass
    finally:
        done.set()
        holder.join()
    assert store.deliveries.get_delivery("d-1") is None


class StartWaitsForTheHead:
    """The store's delivery log, whose start record is written only once GitHub has been asked for the
    branch head (or WAIT_S has passed): a push that read the head only after its start would wait the
    whole bound in vain."""

    def __init__(self, store: PeeweeStore, blog: Blog) -> None:
        self._store, self._blog = store, blog
        self.head_asked_first: bool | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    @property
    def deliveries(self) -> StartWaitsForTheHead:
        return self

    def delivery_and_last_sync(self, *args: object) -> object:
        return self._store.deliveries.delivery_and_last_sync(*args)  # type: ignore[arg-type]

    def start_delivery(self, *args: object) -> None:
        deadline = datetime.now(UTC) + timedelta(seconds=WAIT_S)
        while self._blog.github.count("commit") < 1 and datetime.now(UTC) < deadline:
            threading.Event().wait(0.005)
        self.head_asked_first = self._blog.github.count("commit") >= 1
        self._store.deliveries.start_delivery(*args)  # type: ignore[arg-type]

    def finish_delivery(self, delivery_id: str, **finish: object) -> None:
        self._store.deliveries.finish_delivery(delivery_id, **finish)  # type: ignore[arg-type]


def process(
    blog: Blog, delivery_id: str, after: str, *, wait_for_head: bool = False
) -> StartWaitsForTheHead | None:
    push = PushRef(repository=REPO, branch="main", installation_id=INSTALLATION_ID, after=after)
    info = DeliveryInfo(delivery_id=delivery_uuid(delivery_id), event="push", received_at=datetime.now(UTC))
    with blog.store() as store:
        waiting = StartWaitsForTheHead(store, blog) if wait_for_head else None
        Worker(waiting or store, blog.source).process_push(info, push)  # type: ignore[arg-type]
    return waiting


def test_the_branch_head_is_read_while_the_start_is_recorded(blog: Blog) -> None:
    # GIVEN a followed repository synced once, and a push that edits one article
    process(blog, "first", blog.github.set_files({"articles/a.md": article("Old")}))
    head = blog.commit({"articles/a.md": article("New")})
    blog.github.reset_records()

    # WHEN it is processed
    waiting = process(blog, "second", head, wait_for_head=True)

    # THEN GitHub was asked for the head before the start record went out, and the push synced it
    assert waiting is not None and waiting.head_asked_first is True
    assert served(blog)["a"]["title"] == "New"
    assert delivery(blog, "second").outcome == "success"


def test_no_thread_of_the_head_read_outlives_a_push_whose_head_cannot_be_read(blog: Blog) -> None:
    # GIVEN a followed repository synced once, and a push whose branch head GitHub answers 404 for
    process(blog, "first", blog.github.set_files({"articles/a.md": article("Old")}))
    head = blog.commit({"articles/a.md": article("New")})
    blog.github.fail(re.compile(r"/repos/octo/blog/commits/.+"), 404, times=5)

    # WHEN it is processed
    with pytest.raises(SourcePermanentError):
        process(blog, "second", head)

    # THEN the failure is recorded, nothing was written, and no thread of the read is left
    assert delivery(blog, "second").outcome == "failed"
    assert served(blog)["a"]["title"] == "Old"
    assert not [t for t in threading.enumerate() if t.name.startswith("head-read")]


def test_a_push_whose_branch_moved_on_stores_the_branch_head(blog: Blog) -> None:
    # GIVEN head 1 synced, then head 2 pushed, and head 3 pushed before head 2's delivery runs
    process(blog, "first", blog.github.set_files({"articles/a.md": article("Old")}))
    head2 = blog.commit({"articles/a.md": article("Middle")})
    head3 = blog.commit({"articles/a.md": article("New")})

    # WHEN head 2's delivery runs
    process(blog, "second", head2)

    # THEN the head read under the lock is head 3, and head 3's content is stored
    assert served(blog)["a"]["title"] == "New"
    assert delivery(blog, "second").head_sha == head3
