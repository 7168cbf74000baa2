"""A push's repository read begun with its opening database turn: the pushed commit's listing is asked
for before that turn ends, and a changed blob before the branch head is answered; the head read under
the lock still decides what is stored, nothing read ahead is stored when the delivery is skipped or the
branch moved on, and no thread of the read outlives the push. On SQLite and MariaDB."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from function.errors import SourcePermanentError
from function.sources.port import RepoRef
from function.store.facade import PeeweeStore
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync import Worker
from function.worker.sync.push_read import PushHints
from function.worker.sync.replay import ALREADY_PROCESSED
from function.worker.sync.summary import SyncSummary
from tests.kit.blog_checks import delivery, served, stored, synced_head
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import delivery_uuid
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.kit.github_standin import StandInRequest, StandInResponse

OLD = article("Old title", body="Old body.")
MIDDLE = article("Middle title", body="Middle body.")
NEW = article("New title", body="New body.")
WAIT_S = 10.0  # a bound on waiting for the other side (a failing test ends then), never a timing check


def wait_until(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` became true within WAIT_S (checked every few milliseconds)."""
    end = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def process(
    blog: Blog,
    delivery_id: str,
    after: str,
    hints: PushHints,
    wrap: Callable[[PeeweeStore], Any] = lambda store: store,
) -> SyncSummary:
    push = PushRef(repository=REPO, branch="main", installation_id=INSTALLATION_ID, after=after)
    info = DeliveryInfo(delivery_id=delivery_uuid(delivery_id), event="push", received_at=datetime.now(UTC))
    with blog.store() as store:
        return Worker(wrap(store), blog.source, hints=hints).process_push(info, push)


class OpeningWaitsForTheListing:
    """The store, whose opening turn is sent only once GitHub has been asked for a tree listing (or
    WAIT_S has passed): a push that asks only after that turn would wait the whole bound in vain."""

    def __init__(self, store: PeeweeStore, blog: Blog) -> None:
        self._store = store
        self._blog = blog
        self.listing_asked_first: bool | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextlib.contextmanager
    def push_opened(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self.listing_asked_first = wait_until(lambda: self._blog.github.count("tree") >= 1)
        with self._store.push_opened(*args, **kwargs) as opened:
            yield opened


def synced_once(blog: Blog) -> tuple[PushHints, str]:
    """One article at head 1, synced (the process now knows the repository is followed)."""
    hints = PushHints()
    head = blog.github.set_files({"articles/a.md": OLD, "articles/keep.md": article("Keep")})
    assert process(blog, "first", head, hints).written == 2
    return hints, head


def test_the_pushed_listing_is_asked_for_before_the_opening_turn_is_sent(blog: Blog) -> None:
    # GIVEN a followed repository synced once, and a push that edits one article
    hints, _ = synced_once(blog)
    head = blog.commit({"articles/a.md": NEW})
    blog.github.reset_records()
    waiting: list[OpeningWaitsForTheListing] = []

    def wrap(store: PeeweeStore) -> OpeningWaitsForTheListing:
        waiting.append(OpeningWaitsForTheListing(store, blog))
        return waiting[-1]

    # WHEN it is processed
    summary = process(blog, "second", head, hints, wrap)

    # THEN GitHub was asked for the listing before the database turn went out, and the push synced the
    # head with the usual requests: one head, one listing, one blob
    assert waiting[0].listing_asked_first is True
    assert summary.written == 1 and summary.head_sha == head
    assert blog.github.count("commit") == 1 and blog.github.count("tree") == 1
    assert blog.github.count("blob") == 1
    assert served(blog)["a"]["title"] == "New title"


def test_the_changed_blob_is_asked_for_before_the_branch_head_is_answered(blog: Blog) -> None:
    # GIVEN a followed repository synced once, a push that edits one article, and GitHub holding the
    # branch head's answer until that article's blob is asked for (or WAIT_S has passed)
    hints, _ = synced_once(blog)
    head = blog.commit({"articles/a.md": NEW})
    blob_first: list[bool] = []

    def head_after_the_blob(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        blob_first.append(wait_until(lambda: blog.github.count("blob") >= 1))
        return StandInResponse(200, head.encode(), {"Content-Type": "application/vnd.github.sha"})

    blog.github.add_route(
        "GET", r"/repos/octo/blog/commits/.+", head_after_the_blob, kind="commit", auth="token"
    )
    blog.github.reset_records()

    # WHEN it is processed
    summary = process(blog, "second", head, hints)

    # THEN the blob was on its way before the head came back, and it was fetched once
    assert blob_first == [True]
    assert summary.written == 1 and blog.github.count("blob") == 1
    assert blog.article("a")["content"] == "New body."


def test_a_duplicate_read_ahead_is_skipped_and_stores_nothing(blog: Blog) -> None:
    # GIVEN head 1 synced here, and head 2's delivery recorded complete by another run (so the content
    # here is still head 1's)
    hints, _ = synced_once(blog)
    head2 = blog.commit({"articles/a.md": NEW})
    now = datetime.now(UTC)
    with blog.store() as store:
        store.start_delivery(delivery_uuid("second"), "push", INSTALLATION_ID, REPO, now, now)
        store.finish_delivery(
            delivery_uuid("second"), head_sha=head2, processed=2, succeeded=2, failed=0, archived=0,
            outcome="success", error=None, now=now,
        )  # fmt: skip
        record = store.get_delivery(delivery_uuid("second"))
    before = stored(blog)
    blog.github.reset_records()

    # WHEN that delivery comes again
    summary = process(blog, "second", head2, hints)

    # THEN the listing was read ahead, but the delivery is skipped and nothing of it is stored: no blob,
    # the same articles, the same record
    assert summary.skipped_reason == ALREADY_PROCESSED
    assert blog.github.count("tree") == 1 and blog.github.count("blob") == 0
    assert stored(blog) == before
    assert served(blog)["a"]["title"] == "Old title"
    assert delivery(blog, "second") == record
    assert synced_head(blog) == head2


def test_a_push_whose_branch_moved_on_stores_the_head_not_what_was_read_ahead(blog: Blog) -> None:
    # GIVEN head 1 synced, then head 2 pushed, and head 3 pushed before head 2's delivery runs
    hints, _ = synced_once(blog)
    head2 = blog.commit({"articles/a.md": MIDDLE})
    head3 = blog.commit({"articles/a.md": NEW})
    blog.github.reset_records()

    # WHEN head 2's delivery runs
    summary = process(blog, "second", head2, hints)

    # THEN head 2's listing and blob were read ahead, then dropped: the head read under the lock is
    # head 3, and head 3's content is stored
    assert blog.github.count("tree") == 2 and blog.github.count("blob") == 2
    assert summary.head_sha == head3 and summary.written == 1
    assert blog.article("a")["content"] == "New body."
    assert synced_head(blog) == head3


def test_no_thread_of_the_read_outlives_a_push_whose_head_cannot_be_read(blog: Blog) -> None:
    # GIVEN a followed repository synced once, and a push whose branch head GitHub answers 404 for
    hints, _ = synced_once(blog)
    head = blog.commit({"articles/a.md": NEW})
    blog.github.fail(re.compile(r"/repos/octo/blog/commits/.+"), 404, times=5)
    blog.github.reset_records()

    # WHEN it is processed
    with pytest.raises(SourcePermanentError):
        process(blog, "second", head, hints)

    # THEN the listing had been read ahead, the failure is recorded, nothing was written, and no
    # thread of the read is left
    assert blog.github.count("tree") == 1
    assert delivery(blog, "second").outcome == "failed"
    assert served(blog)["a"]["title"] == "Old title"
    assert not [t for t in threading.enumerate() if t.name.startswith("push-read")]


def test_nothing_is_read_ahead_for_a_repository_or_a_head_this_process_has_not_seen_followed() -> None:
    hints = PushHints()
    repo = RepoRef("octo/blog", "main", 1, pushed_head="1" * 40)
    # A repository never opened here: a push from it may be from one the blog does not follow.
    assert not hints.claim(repo)
    hints.saw(repo, followed=True, head="0" * 40)
    # A new head of a followed repository (whatever its name's case) is read ahead, once.
    assert hints.claim(RepoRef("Octo/Blog", "main", 1, pushed_head="1" * 40))
    assert not hints.claim(repo)
    # The head synced last is a replay's: not read ahead.
    hints.saw(repo, followed=True, head="2" * 40)
    assert not hints.claim(RepoRef("octo/blog", "main", 1, pushed_head="2" * 40))
    # Another installation's repository of that name, or one no longer followed: not read ahead.
    assert not hints.claim(RepoRef("octo/blog", "main", 2, pushed_head="3" * 40))
    hints.saw(repo, followed=False, head=None)
    assert not hints.claim(RepoRef("octo/blog", "main", 1, pushed_head="3" * 40))
