"""The worker: reconcile every article of the repository into the database.

Full-scan meaning, incremental cost: every run compares the whole tree listing (blob SHAs) with what
the database holds, so a missed or failed delivery heals on the next push, but only the files whose
SHA changed are fetched and parsed, and the writes are a constant number of batched statements.

This class only orders the steps; each is a module of this package: the plan (``plan``), reading a
chunk (``reading``), the loop under the deadline (``chunked``), the writes (``writing``), the skips
(``replay``) and the delivery record (``records``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, tzinfo
from typing import NoReturn

from function.assets.syncing import AssetSync
from function.aws.deadline import UNLIMITED, Deadline
from function.errors import ConfigError, NotFound, UnknownInstallation
from function.sources.fetch_ahead import FetchesAhead
from function.sources.port import ArticleSource, RepoRef
from function.store.batching import ARCHIVE_MAX_ARTICLES, TRANSACTION_MAX_ARTICLES, TRANSACTION_MAX_BYTES
from function.store.book_records import StoredBook
from function.store.job_turns import DeliveryStart
from function.store.models import to_naive_utc
from function.store.records import UserRecord, is_complete
from function.store.steps import is_store_error
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.budget import COMMIT_MARGIN_S, READ_CHUNK_BYTES, READ_CHUNK_FILES
from function.worker.sync.books import BookSync
from function.worker.sync.chunked import ChunkedSync, Progress
from function.worker.sync.plan import Known, Planner, ReadPlan
from function.worker.sync.ports import WorkerStore
from function.worker.sync.push_read import PushHints, PushRead, hints_for
from function.worker.sync.reading import ChunkReader
from function.worker.sync.records import DeliveryRecorder
from function.worker.sync.replay import ALREADY_PROCESSED, Replays, follows, same_name
from function.worker.sync.summary import SyncSummary
from function.worker.sync.write_failures import failure_text, worded_before_writes
from function.worker.sync.writing import ArticleWriter

log = logging.getLogger(__name__)

# What a delivery's "files left" names when the time budget left no room for the books.
BOOKS_LEFT = "books/"

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Naive UTC, as the database stores it."""
    return datetime.now(UTC).replace(tzinfo=None)


def repo_of(push: PushRef) -> RepoRef:
    return RepoRef(push.repository, push.branch, push.installation_id, pushed_head=push.after)


class Worker:
    """Syncs one user's articles from an ArticleSource into a store."""

    def __init__(
        self,
        store: WorkerStore,
        source: ArticleSource,
        *,
        articles_dir: str = "articles",
        allow_raw_html: bool = False,
        timezone: tzinfo | None = None,
        asset_base_url: str | None = None,
        clock: Clock = utc_now,
        # Under the database read time-out (30 s), or a long wait would look like an outage.
        lock_timeout_s: float = 25.0,
        batch_max_articles: int = TRANSACTION_MAX_ARTICLES,
        batch_max_bytes: int = TRANSACTION_MAX_BYTES,
        archive_max_articles: int = ARCHIVE_MAX_ARTICLES,
        chunk_max_files: int = READ_CHUNK_FILES,
        chunk_max_bytes: int = READ_CHUNK_BYTES,
        commit_margin_s: float = COMMIT_MARGIN_S,
        # The repository's images (function.assets): stored in the same pass; None: left as written.
        assets: AssetSync | None = None,
        # A local folder (make run) has one repository; on GitHub a push must come from the one named.
        first_push_pins: bool = False,
        render_processes: int | None = None,
        read_ahead: bool = True,
        # What this process learnt of earlier pushes, for reading a push's repository ahead of its
        # lock (``push_read``); by default, shared by every worker on the same source.
        hints: PushHints | None = None,
    ) -> None:
        self._store = store
        self._assets = assets
        self._source = source
        self._hints = hints if hints is not None else hints_for(source)
        # The changed blobs a push fetches ahead are handed to the reader through this.
        self._fetches = FetchesAhead(source)
        self._first_push_pins = first_push_pins
        self._clock = clock
        self._lock_timeout_s = lock_timeout_s
        self._planner = Planner(
            articles_dir, chunk_max_files=chunk_max_files, chunk_max_bytes=chunk_max_bytes
        )
        reader = ChunkReader(
            self._fetches,
            articles_dir=articles_dir,
            allow_raw_html=allow_raw_html,
            timezone=timezone,
            asset_base_url=asset_base_url,
            render_processes=render_processes,
        )
        writer = ArticleWriter(
            store,
            clock,
            batch_max_articles=batch_max_articles,
            batch_max_bytes=batch_max_bytes,
            archive_max_articles=archive_max_articles,
        )
        self._chunked = ChunkedSync(reader, writer, commit_margin_s=commit_margin_s, read_ahead=read_ahead)
        self._commit_margin_s = commit_margin_s
        self._recorder = DeliveryRecorder(store, clock)
        self._books = BookSync(
            store, source, clock=clock, allow_raw_html=allow_raw_html, asset_base_url=asset_base_url
        )
        self._replays = Replays(store, self._recorder)

    def process_push(
        self, delivery: DeliveryInfo, push: PushRef, *, deadline: Deadline = UNLIMITED
    ) -> SyncSummary:
        """Process one push delivery, at-least-once safe, within ``deadline`` (the invocation's end):
        no chunk of changed files starts unless it can be committed and recorded before it, and the
        files left are in the summary, the delivery record and the log (the retry reads only those).

        The per-user lock serialises deliveries for one user, and the head is read inside it, so
        two deliveries that run at once or finish out of order can never roll content back. A
        delivery already recorded as complete (a success, or partial: only broken files failed) is
        skipped cheaply; a failed one runs again.
        Raises UnknownInstallation (permanent) or the source's / database's retryable errors.
        """
        # The database work before the writes is one turn (``push_opened``): the user's lock, the replay
        # check, the index, the duplicate check, the books' index, the images' rows and the start record;
        # the finish record and the lock's release are another. The branch head is read once the lock is
        # held (so two deliveries that run at once can never roll content back); the pushed commit's
        # listing, which never changes, is requested with the opening turn (``push_read``).
        start = DeliveryStart(
            delivery.delivery_id,
            delivery.event,
            push.installation_id,
            push.repository,
            delivery.received_at,
            self._clock,
        )
        repo = repo_of(push)
        with (
            PushRead(self._source, self._fetches, self._planner, repo, self._hints) as read,
            self._store.push_opened(self._lock_timeout_s, start, also=self._assets) as opened,
        ):
            user = opened.user
            if user is None:
                self._unknown_installation(delivery, push)
            followed = follows(user, push, first_push_pins=self._first_push_pins)
            # The pushed head is synced now, or was (a replay, a duplicate): none of its deliveries need
            # this process to read it ahead again.
            self._hints.saw(repo, followed=followed, head=push.after or None)
            if not followed:
                return self._replays.skip_other_repository(user, delivery, push, started=opened.started)
            replayed = self._replays.head_synced_by(opened.last_sync, delivery, push, started=opened.started)
            if replayed is not None:
                return replayed
            if is_complete(opened.previous):
                return SyncSummary(skipped_reason=ALREADY_PROCESSED)
            # The images' rows and references, when blog-api stores the images: read in the opening turn
            # on MySQL/TiDB once this process has seen their tables, else one more read now.
            assets = self._assets.start(user.id, opened.also_rows) if self._assets is not None else None
            known = Known(opened.index, opened.failures, assets)
            # A delivery received before the one that synced last is most likely of an older head, which
            # the branch has left: its changed blobs are not fetched before the head is read.
            last = opened.last_sync
            read.fetch_ahead = last is None or last.received_at <= to_naive_utc(delivery.received_at)
            summary = self._process_locked(user, delivery, push, known, deadline, read, opened.book_index)
            self._hints.saw(repo, followed=True, head=summary.head_sha)
            return summary

    def _unknown_installation(self, delivery: DeliveryInfo, push: PushRef) -> NoReturn:
        fix = f"blog-api users set-installation --name <user> --installation-id {push.installation_id}"
        log.error(
            "Unknown installation",
            extra={
                "delivery": delivery.delivery_id,
                "installation_id": push.installation_id,
                "repository": push.repository,
                "fix": fix,
            },
        )
        # Recorded too, so `blog-api deliveries` shows why nothing synced, with the fix.
        self._recorder.start(delivery, push)
        self._recorder.finish_failed(delivery, f"unknown installation {push.installation_id}: {fix}")
        raise UnknownInstallation(push.installation_id)

    def _load_known(self, user_id: int) -> Known:
        try:
            assets = self._assets.start(user_id) if self._assets is not None else None
            return Known(self._store.load_index(user_id), self._store.load_failures(user_id), assets)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            raise worded_before_writes(exc, "reading the stored articles") from exc

    def _process_locked(
        self,
        user: UserRecord,
        delivery: DeliveryInfo,
        push: PushRef,
        known: Known,
        deadline: Deadline,
        read: PushRead,
        book_index: Mapping[str, StoredBook] | None,
    ) -> SyncSummary:
        """The delivery's work once its user's lock is held and its start recorded."""
        if user.repository is None or (user.repository_id is None and push.repository_id is not None):
            # The first push from the named repository pins its id (or, from a local folder only, the
            # first push names it). Never a change: ``follows`` let only these through.
            self._store.pin_repository(user.id, user.repository or push.repository, push.repository_id)
        try:
            repo = repo_of(push)
            plan = read.plan(known)
            first = self._chunked.first_chunk(repo, plan, deadline)
            summary = self._chunked.run(user.id, repo, plan, known, deadline, first=first)
            self._sync_books(user.id, repo, plan, summary, deadline, book_index=book_index)
        except Exception as exc:
            self._recorder.finish_failed(delivery, failure_text(exc)[:2000])
            raise
        self._recorder.finish(delivery, summary, release_lock_of=user.id)
        return summary

    def sync_user(
        self,
        name: str,
        *,
        branch: str | None = None,
        repository: str | None = None,
        progress: Progress | None = None,
        deadline: Deadline = UNLIMITED,
        rebuild: bool = False,
    ) -> SyncSummary:
        """A full scan for one user now (the CLI's ``sync``), under the same lock as deliveries, of the
        repository the user follows. ``repository`` (owner/name) names it for a user who follows none
        yet, and pins it; for any other user it must be the one they follow (ConfigError if not).
        ``rebuild``: read and render every article again, unchanged files too (after an upgrade that
        renders or reads front matter differently; an unchanged article keeps its ``updatedAt``)."""
        user = self._store.get_user(name)
        if user is None:
            raise NotFound(f"no user named {name!r}")
        if repository and user.repository and not same_name(repository, user.repository):
            raise ConfigError(
                f"user {name!r} follows {user.repository}, not {repository}: "
                f"blog-api users set-repository --name {name} --repository {repository} changes it"
            )
        repo = RepoRef(user.repository or repository or "", branch, user.installation_id)
        with self._store.user_lock(user.id, self._lock_timeout_s):
            if user.repository is None and repository:
                self._store.pin_repository(user.id, repository, None)
            known = self._load_known(user.id)
            plan = self._planner.plan(self._source.snapshot(repo), known, rebuild=rebuild)
            summary = self._chunked.run(user.id, repo, plan, known, deadline, progress=progress)
            self._sync_books(user.id, repo, plan, summary, deadline, rebuild=rebuild)
            return summary

    def _sync_books(
        self,
        user_id: int,
        repo: RepoRef,
        plan: ReadPlan,
        summary: SyncSummary,
        deadline: Deadline,
        *,
        rebuild: bool = False,
        book_index: Mapping[str, StoredBook] | None = None,
    ) -> None:
        """Sync the Zenn books of the same listing once the articles are committed; not when the time
        budget left article files for the next run (the books then wait for it too), nor when it leaves
        less than the commit margin: the books are then left, named ``books/``, and the retry syncs them."""
        if summary.left:
            return
        if plan.snapshot.book_files and not deadline.allows(self._commit_margin_s):
            summary.left.append(BOOKS_LEFT)
            return
        self._books.run(
            user_id, repo, plan.snapshot, rebuild=rebuild, assets=plan.assets, index=book_index
        ).add_to(summary)
