"""The worker: reconcile every article of the repository into the database.

Full-scan meaning, incremental cost: every run compares the whole tree listing (blob SHAs) with what
the database holds, so a missed or failed delivery heals on the next push, but only the files whose
SHA changed are fetched and parsed, and the writes are a constant number of batched statements.

This class only builds the parts and orders them; each is a module of this package: opening a push under
its user's lock (``opening``), the skips (``replay``), the user's binding and the safety valve
(``safeguards``), the sync of the repository once locked (``repository``: the plan, the chunks under the
deadline, the books), the delivery record (``records``) and ``blog-api sync``'s full scan (``full_scan``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, tzinfo

from function.articles.render_fingerprint import RENDER_VERSION, render_fingerprint
from function.assets.syncing import AssetSync
from function.aws.deadline import UNLIMITED, Deadline
from function.errors import SourceMismatch
from function.sources.port import ArticleSource
from function.store.batching import (
    ARCHIVE_MAX_ARTICLES,
    ARCHIVE_MAX_BYTES,
    TRANSACTION_MAX_ARTICLES,
    TRANSACTION_MAX_BYTES,
)
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.budget import COMMIT_MARGIN_S, READ_CHUNK_BYTES, READ_CHUNK_FILES
from function.worker.sync.books import BookSync
from function.worker.sync.chunked import ChunkedSync, Progress
from function.worker.sync.full_scan import FullScan
from function.worker.sync.opening import PushOpening, Started
from function.worker.sync.plan import Planner
from function.worker.sync.ports import VectorStep, WorkerStore
from function.worker.sync.reading import ChunkReader
from function.worker.sync.records import DeliveryRecorder
from function.worker.sync.replay import Replays
from function.worker.sync.repository import RepositorySync
from function.worker.sync.safeguards import Safeguards
from function.worker.sync.summary import SyncSummary
from function.worker.sync.write_failures import failure_text
from function.worker.sync.writing import ArticleWriter

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Naive UTC, as the database stores it."""
    return datetime.now(UTC).replace(tzinfo=None)


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
        archive_max_bytes: int = ARCHIVE_MAX_BYTES,
        chunk_max_files: int = READ_CHUNK_FILES,
        chunk_max_bytes: int = READ_CHUNK_BYTES,
        commit_margin_s: float = COMMIT_MARGIN_S,
        # The repository's images (function.assets): stored in the same pass; None: left as written.
        assets: AssetSync | None = None,
        # A local folder (make run) has one repository; on GitHub a push must come from the one named.
        first_push_pins: bool = False,
        render_processes: int | None = None,
        read_ahead: bool = True,
        # Raised in the code when rendering changes (``RENDER_VERSION``); a test may run another.
        render_version: int = RENDER_VERSION,
        # The safety valve's threshold (MASS_REMOVAL_FRACTION): see ``mass_removal``.
        mass_removal_fraction: float = 0.5,
        # Semantic search's vectors, brought up to date after each sync (None: no embedding provider).
        vectors: VectorStep | None = None,
    ) -> None:
        self._vectors = vectors
        self._users = store.users
        self._guards = Safeguards(store.users, source, clock, fraction=mass_removal_fraction)
        # What this worker renders with: a file stored with another fingerprint is rendered again.
        fingerprint = render_fingerprint(
            allow_raw_html=allow_raw_html,
            images_elsewhere=asset_base_url is not None,
            render_version=render_version,
        )
        reader = ChunkReader(
            source,
            articles_dir=articles_dir,
            allow_raw_html=allow_raw_html,
            timezone=timezone,
            asset_base_url=asset_base_url,
            render_processes=render_processes,
        )
        writer = ArticleWriter(
            store.reconcile,
            clock,
            batch_max_articles=batch_max_articles,
            batch_max_bytes=batch_max_bytes,
            archive_max_articles=archive_max_articles,
            archive_max_bytes=archive_max_bytes,
            render_fingerprint=fingerprint,
        )
        books = BookSync(
            store.books,
            source,
            clock=clock,
            allow_raw_html=allow_raw_html,
            asset_base_url=asset_base_url,
            render_fingerprint=fingerprint,
        )
        planner = Planner(
            articles_dir,
            chunk_max_files=chunk_max_files,
            chunk_max_bytes=chunk_max_bytes,
            render_fingerprint=fingerprint,
        )
        self._sync = RepositorySync(
            planner,
            ChunkedSync(reader, writer, commit_margin_s=commit_margin_s, read_ahead=read_ahead),
            books,
            store.reconcile,
            assets,
        )
        self._recorder = DeliveryRecorder(store.deliveries, clock)
        self._replays = Replays(self._recorder, first_push_pins=first_push_pins)
        self._full_scan = FullScan(
            store,
            source,
            self._sync,
            self._recorder,
            self._guards,
            clock=clock,
            lock_timeout_s=lock_timeout_s,
        )
        self._opening = PushOpening(
            store, source, self._recorder, lock_timeout_s=lock_timeout_s, assets=assets
        )

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
        With an embedding provider, the user's vectors are brought up to date afterwards, after the
        sync's transactions and its user's lock (no call to the provider holds either); whatever that
        meets, the answer stays the sync's.
        Raises UnknownInstallation (permanent) or the source's / database's retryable errors.
        """
        user_id, summary = self._process_push(delivery, push, deadline)
        if self._vectors is not None:
            self._vectors.run(user_id, deadline)
        return summary

    def _process_push(
        self, delivery: DeliveryInfo, push: PushRef, deadline: Deadline
    ) -> tuple[int, SyncSummary]:
        """The push's sync under its user's lock, and the user's id."""
        with self._opening.locked(delivery, push) as locked:
            user = locked.user
            skipped = self._replays.skipped(user, delivery, push, locked.previous, locked.last_sync)
            if skipped is not None:
                self._guards.done(user, skipped)
                return user.id, skipped
            try:
                self._guards.bind(user, repository=push.repository)
            except SourceMismatch as exc:
                # Refused before anything is read: recorded, so `blog-api deliveries` says why.
                self._recorder.start(delivery, push)
                self._recorder.finish_failed(delivery, exc.message)
                raise
            with self._opening.started(user, delivery, push) as started:
                return user.id, self._synced(started, delivery, deadline)

    def _synced(self, started: Started, delivery: DeliveryInfo, deadline: Deadline) -> SyncSummary:
        """The push's sync once its start is recorded; its end (or its failure) recorded."""
        user = started.user
        try:
            snapshot = started.head()
            valve = self._guards.valve(user)
            summary = self._sync.run(user.id, started.repo, snapshot, started.known, deadline, valve=valve)
        except Exception as exc:
            self._recorder.finish_failed(delivery, failure_text(exc)[:2000])
            raise
        self._recorder.finish(delivery, summary)
        self._guards.done(user, summary)
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
        confirm_removal: bool = False,
    ) -> SyncSummary:
        """A full scan for one user now (the CLI's ``sync``), under the same lock as deliveries, of the
        repository the user follows, recorded as a delivery (``sync-…``) like a push. ``repository``
        (owner/name) names it for a user who follows none yet, and pins it; for any other user it must
        be the one they follow (ConfigError if not). ``rebuild``: read and render every article again,
        unchanged files too (an unchanged article keeps its ``updatedAt``). ``confirm_removal``: no
        safety valve (a person confirmed it). Raises SourceMismatch for another source than the user's."""
        summary = self._full_scan.run(
            name,
            branch=branch,
            repository=repository,
            progress=progress,
            deadline=deadline,
            rebuild=rebuild,
            confirm_removal=confirm_removal,
        )
        user = self._users.get_user(name) if self._vectors is not None else None
        if self._vectors is not None and user is not None:
            self._vectors.run(user.id, deadline)
        return summary
