"""The worker: reconcile every article of the repository into the database.

Full-scan meaning, incremental cost: every run compares the whole tree listing (blob SHAs) with what
the database holds, so a missed or failed delivery heals on the next push, but only the files whose
SHA changed are fetched and parsed, and the writes are a constant number of batched statements.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any, Protocol

from function.articles.parse import is_article_path, parse_article, slug_for_path
from function.articles.parsed import ParsedArticle
from function.aws.deadline import UNLIMITED, Deadline
from function.errors import ArticleParseError, ConfigError, NotFound, UnknownInstallation
from function.sources.port import ArticleSource, FetchFailure, RepoFile, RepoRef, Snapshot
from function.store.batching import TRANSACTION_MAX_ARTICLES, TRANSACTION_MAX_BYTES, transaction_batches
from function.store.records import RememberedFailure
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.budget import COMMIT_MARGIN_S, READ_CHUNK_BYTES, READ_CHUNK_FILES, read_chunks
from function.worker.changes import ReaderChanges

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
Progress = Callable[[int, int], None]  # (done, total)


def utc_now() -> datetime:
    """Naive UTC, as the database stores it."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class FileFailure:
    path: str
    message: str
    retryable: bool
    # Failed to parse at this same blob before: reported from the store, neither fetched nor parsed again.
    remembered: bool = False


@dataclass(frozen=True)
class FileWarning:
    """Something to fix in a file that is still served (an unknown front matter key): never a failure."""

    path: str
    message: str


@dataclass
class SyncSummary:
    processed: int = 0  # article files in the repository at the head
    succeeded: int = 0  # of those, in sync after this run
    failed: int = 0  # could not be fetched or parsed (left as they were)
    fetched: int = 0  # files whose content was read (changed since the last run)
    written: int = 0  # rows inserted or updated
    archived: int = 0  # rows newly archived: their file is gone (not among ``processed``)
    head_sha: str | None = None
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    drafts: int = 0  # of the articles in sync, how many are drafts (publish false): not served
    skipped_reason: str | None = None
    listing_complete: bool = True  # False: the tree listing was truncated, so nothing was archived
    # Changed files not read because the time budget ran out: left for the next run (not among
    # ``succeeded`` or ``failed``); nothing was archived either.
    left: list[str] = field(default_factory=list)
    # What readers see change (published, updated, unpublished slugs), for the outgoing webhooks.
    changes: ReaderChanges = field(default_factory=ReaderChanges)

    @property
    def retryable(self) -> bool:
        """True when some file failed for a reason that may pass (GitHub 5xx, time-out), or was left."""
        return bool(self.left) or any(f.retryable for f in self.failures)

    @property
    def unchanged(self) -> int:
        """Articles in sync whose row was left as it was: what tells a no-op from an edit."""
        return max(self.succeeded - self.written, 0)

    @property
    def outcome(self) -> str:
        """``partial``: some files are broken (they fail again until their blob changes), the delivery
        is complete all the same; ``failed``: some file may pass on a retry (GitHub 5xx, time-out)."""
        if self.skipped_reason:
            return "skipped"
        if self.left:
            return "failed"
        if not self.failures:
            return "success"
        return "failed" if self.retryable else "partial"

    def to_json(self) -> dict[str, Any]:
        if self.skipped_reason:
            return {"status": "skipped", "reason": self.skipped_reason}
        return {
            "status": "processed",
            "processed": self.processed,
            "succeeded": self.succeeded,
            "failed": self.failed,
            # What changed, so an edit and a no-op read differently (the four above are the contract's).
            "written": self.written,
            "archived": self.archived,
            "unchanged": self.unchanged,
            "failedPaths": [f.path for f in self.failures],
        }

    def log_fields(self) -> dict[str, Any]:
        return {
            "processed": self.processed,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "fetched": self.fetched,
            "written": self.written,
            "archived": self.archived,
            "unchanged": self.unchanged,
            "drafts": self.drafts,
            "warnings": len(self.warnings),
            "left": len(self.left),
            "head_sha": self.head_sha,
        }


class Store(Protocol):
    """The part of ``function.store.facade.PeeweeStore`` the worker uses."""

    def installation_user_locked(self, installation_id: int, timeout_s: float) -> Any: ...
    def get_user(self, name: str) -> Any: ...
    def pin_repository(self, user_id: int, repository: str, repository_id: int | None) -> None: ...
    def load_index(self, user_id: int) -> Mapping[str, Any]: ...
    def load_failures(self, user_id: int) -> Mapping[str, Any]: ...
    def remember_failures(
        self, user_id: int, failures: Sequence[Any], forget_slugs: Sequence[str]
    ) -> None: ...
    def apply(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        archive_slugs: Sequence[str],
        now: datetime,
        *,
        index: Mapping[str, Any] | None = None,
    ) -> Any: ...
    def user_lock(self, user_id: int, timeout_s: float) -> Any: ...
    def get_delivery(self, delivery_id: str) -> Any: ...
    def last_sync(self, installation_id: int, repository: str) -> Any: ...
    def start_delivery(
        self,
        delivery_id: str,
        event: str,
        installation_id: int | None,
        repository: str | None,
        received_at: datetime,
        now: datetime,
    ) -> None: ...
    def finish_delivery(
        self,
        delivery_id: str,
        *,
        head_sha: str | None,
        processed: int,
        succeeded: int,
        failed: int,
        archived: int,
        outcome: str,
        error: str | None,
        now: datetime,
        written: int | None = None,
        unchanged: int | None = None,
    ) -> None: ...


class Worker:
    """Syncs one user's articles from an ArticleSource into a Store."""

    def __init__(
        self,
        store: Store,
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
        chunk_max_files: int = READ_CHUNK_FILES,
        chunk_max_bytes: int = READ_CHUNK_BYTES,
        commit_margin_s: float = COMMIT_MARGIN_S,
    ) -> None:
        self._chunk_max_files = chunk_max_files
        self._chunk_max_bytes = chunk_max_bytes
        self._commit_margin_s = commit_margin_s
        self._batch_max_articles = batch_max_articles
        self._batch_max_bytes = batch_max_bytes
        self._store = store
        self._source = source
        self._articles_dir = articles_dir
        self._allow_raw_html = allow_raw_html
        self._timezone = timezone
        self._asset_base_url = asset_base_url
        self._clock = clock
        self._lock_timeout_s = lock_timeout_s

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
        with self._store.installation_user_locked(push.installation_id, self._lock_timeout_s) as user:
            if user is None:
                fix = (
                    f"blog-api users set-installation --name <user> --installation-id {push.installation_id}"
                )
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
                self._start(delivery, push)
                self._finish_failed(delivery, f"unknown installation {push.installation_id}: {fix}")
                raise UnknownInstallation(push.installation_id)
            if not follows(user, push):
                return self._skip_other_repository(user, delivery, push)
            replayed = self._already_synced(delivery, push)
            if replayed is not None:
                return replayed
            repo = repo_of(push)
            # GitHub and the database are both tens of milliseconds away, and neither needs the other
            # until the writes: the repository is read (listing, changed files, parsing) on another
            # thread as soon as the lock is held (the head must be read under it), while this thread
            # loads the index the read diffs against, then asks whether the delivery is a duplicate and
            # records its start. A duplicate wastes at most that read; every other delivery saves the
            # database's round trips. The block ends only once the read is over.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read") as pool:
                index_loaded: Future[_Known] = Future()
                reading = pool.submit(self._read_when_indexed, repo, index_loaded, deadline)
                try:
                    known = self._load_known(user.id)
                except BaseException as exc:
                    index_loaded.set_exception(exc)
                    raise
                index_loaded.set_result(known)
                previous = self._store.get_delivery(delivery.delivery_id)
                if previous is not None and previous.outcome in ("success", "partial"):
                    return SyncSummary(skipped_reason="delivery already processed")
                return self._process_locked(user, delivery, push, known, reading, deadline)

    def _load_known(self, user_id: int) -> _Known:
        return _Known(self._store.load_index(user_id), self._store.load_failures(user_id))

    def _already_synced(self, delivery: DeliveryInfo, push: PushRef) -> SyncSummary | None:
        """Replays cost nothing: a push whose ``after`` is the head the latest sync of this user's
        repository reached, with no transient failure left from it, is done without a GitHub request.
        It also coalesces deliveries queued on the lock: the ones behind a sync of their head end here.
        (X-GitHub-Delivery is not signed, so one captured push can come back under any number of ids.)
        One SELECT, under the lock, before the read starts."""
        last = self._store.last_sync(push.installation_id, push.repository)
        if last is None or not push.after or last.head_sha != push.after:
            return None
        if RETRYABLE_MARK in (last.error or ""):
            # A file failed for a reason that may pass, or the listing was truncated: syncing this
            # head again can still change something.
            return None
        if last.delivery_id == delivery.delivery_id:
            return SyncSummary(head_sha=last.head_sha, skipped_reason="delivery already processed")
        self._start(delivery, push)
        self._finish_empty(delivery, "skipped", None, head_sha=last.head_sha)
        log.info(
            "Head already synced",
            extra={
                "delivery": delivery.delivery_id,
                "head_sha": last.head_sha,
                "synced_by": last.delivery_id,
            },
        )
        return SyncSummary(head_sha=last.head_sha, skipped_reason="head already synced")

    def _start(self, delivery: DeliveryInfo, push: PushRef) -> None:
        self._store.start_delivery(
            delivery.delivery_id,
            delivery.event,
            push.installation_id,
            push.repository,
            delivery.received_at,
            self._clock(),
        )

    def _skip_other_repository(self, user: Any, delivery: DeliveryInfo, push: PushRef) -> SyncSummary:
        """A push from a repository the user's blog does not follow: an App installed on "All
        repositories" receives every repository's pushes. Nothing is read or written but the record."""
        followed = f"{user.repository} (id {user.repository_id or 'not seen yet'})"
        pushed = f"{push.repository} (id {push.repository_id or 'unknown'})"
        log.info(
            "Push from another repository skipped",
            extra={"delivery": delivery.delivery_id, "repository": pushed, "followed": followed},
        )
        self._start(delivery, push)
        self._finish_empty(
            delivery, "skipped", f"{OTHER_REPOSITORY}: {pushed}; the blog follows {followed}"[:2000]
        )
        return SyncSummary(skipped_reason=OTHER_REPOSITORY)

    def _finish_failed(self, delivery: DeliveryInfo, error: str) -> None:
        self._finish_empty(delivery, "failed", error)

    def _finish_empty(
        self, delivery: DeliveryInfo, outcome: str, error: str | None, head_sha: str | None = None
    ) -> None:
        """Record a delivery that ended before any article was read: every count zero."""
        self._store.finish_delivery(
            delivery.delivery_id,
            head_sha=head_sha,
            processed=0,
            succeeded=0,
            failed=0,
            archived=0,
            outcome=outcome,
            error=error,
            now=self._clock(),
        )

    def _process_locked(
        self,
        user: Any,
        delivery: DeliveryInfo,
        push: PushRef,
        known: _Known,
        reading: Future[tuple[_Plan, _Chunk | None]],
        deadline: Deadline,
    ) -> SyncSummary:
        """The delivery's work once its user's lock is held and the repository's read is on the way."""
        self._start(delivery, push)
        if user.repository is None or (user.repository_id is None and push.repository_id is not None):
            # The first push pins the repository (a user added without one), or the first push from
            # the named repository pins its id. Never a change: ``follows`` let only these through.
            self._store.pin_repository(user.id, user.repository or push.repository, push.repository_id)
        try:
            plan, first = reading.result()
            summary = self._sync(user.id, repo_of(push), plan, known, deadline, first=first)
        except Exception as exc:
            self._finish_failed(delivery, f"{type(exc).__name__}: {exc}"[:2000])
            raise
        self._store.finish_delivery(
            delivery.delivery_id,
            head_sha=summary.head_sha,
            processed=summary.processed,
            succeeded=summary.succeeded,
            failed=summary.failed,
            archived=summary.archived,
            outcome=summary.outcome,
            error=_delivery_error(summary),
            now=self._clock(),
            written=summary.written,
            unchanged=summary.unchanged,
        )
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
            plan = self._plan(self._source.snapshot(repo), known, rebuild=rebuild)
            return self._sync(user.id, repo, plan, known, deadline, progress=progress)

    def _read_when_indexed(
        self, repo: RepoRef, index_loaded: Future[_Known], deadline: Deadline
    ) -> tuple[_Plan, _Chunk | None]:
        """The listing, its diff with the index and the first chunk: the part of a push's read that
        can go on while the database work before the writes runs."""
        snapshot = self._source.snapshot(repo)
        plan = self._plan(snapshot, index_loaded.result())
        chunks = self._chunks(plan)
        if not chunks or not deadline.allows(self._commit_margin_s):
            return plan, None
        return plan, self._read_chunk(repo, plan, chunks[0], deadline)

    def _plan(self, snapshot: Snapshot, known: _Known, *, rebuild: bool = False) -> _Plan:
        """Diff the listing against the index: which files changed (with ``rebuild``, every file). No
        database access. A file that failed to parse at the same blob before is reported again but not
        fetched (with ``rebuild``, it is read again)."""
        started = time.monotonic()
        index = known.index
        files_by_slug = {}
        failures: list[FileFailure] = []
        for file in snapshot.files:
            slug = slug_for_path(file.path, self._articles_dir)
            if slug is not None:
                files_by_slug[slug] = file
            elif is_article_path(file.path, self._articles_dir):
                # An article file whose name cannot be a slug fails alone, with the parser's reason.
                failures.append(FileFailure(file.path, _slug_error(file.path, self._articles_dir), False))
        badly_named = len(failures)
        changed = []
        for slug, file in files_by_slug.items():
            remembered = None if rebuild else known.failures.get(slug)
            if rebuild:
                changed.append(file)
            elif remembered is not None and remembered.blob_sha == file.sha and remembered.path == file.path:
                failures.append(FileFailure(file.path, remembered.message, False, remembered=True))
            elif (stored := index.get(slug)) is None or stored.blob_sha != file.sha or stored.archived:
                changed.append(file)
        _log_failures(failures)
        by_path = {file.path: slug for slug, file in files_by_slug.items()}
        return _Plan(snapshot, set(files_by_slug), badly_named, changed, failures, by_path, started)

    def _chunks(self, plan: _Plan) -> list[list[RepoFile]]:
        return list(read_chunks(plan.changed, self._chunk_max_files, self._chunk_max_bytes))

    def _read_chunk(
        self, repo: RepoRef, plan: _Plan, files: Sequence[RepoFile], deadline: Deadline
    ) -> _Chunk:
        """Fetch and parse one chunk of changed files, timed on the deadline's clock."""
        began = deadline.remaining()
        chunk = _Chunk(fetched=len(files))
        by_sha_path = {(f.path, f.sha): f for f in files}
        results = self._source.fetch(repo, plan.snapshot, files, wanted_in_all=len(plan.changed))
        for result in results:
            if isinstance(result, FetchFailure):
                chunk.failures.append(FileFailure(result.path, result.message, result.retryable))
                continue
            try:
                chunk.parsed.append(
                    parse_article(
                        result.path,
                        result.sha,
                        result.content,
                        articles_dir=self._articles_dir,
                        allow_raw_html=self._allow_raw_html,
                        timezone=self._timezone,
                        asset_base_url=self._asset_base_url,
                    )
                )
            except ArticleParseError as exc:
                chunk.failures.append(FileFailure(result.path, str(exc), retryable=False))
                file = by_sha_path.get((result.path, result.sha)) or RepoFile(result.path, result.sha)
                chunk.parse_failures.append((plan.slug_by_path[result.path], file, str(exc)))
        chunk.warnings = [FileWarning(a.path, message) for a in chunk.parsed for message in a.warnings]
        _log_failures(chunk.failures)
        for warning in chunk.warnings:
            log.warning("Article warning", extra={"path": warning.path, "warning": warning.message})
        if deadline.limited:
            chunk.read_s = began - deadline.remaining()
        return chunk

    def _sync(
        self,
        user_id: int,
        repo: RepoRef,
        plan: _Plan,
        known: _Known,
        deadline: Deadline,
        *,
        first: _Chunk | None = None,
        progress: Progress | None = None,
    ) -> SyncSummary:
        """Read and commit the changed files chunk by chunk, then archive what is gone, and sum it up.

        Each chunk is committed (in bounded transactions) before the next is fetched, so one chunk's
        contents are held at a time and a run cut short keeps what it committed. No chunk starts when
        the deadline leaves less than the commit margin plus the slowest chunk so far: the files left
        are reported, nothing is archived, and the retry reads only those files.
        """
        index = known.index
        snapshot = plan.snapshot
        # A truncated listing may just be missing paths: never archive from it.
        if snapshot.complete:
            archive = [slug for slug, s in index.items() if slug not in plan.slugs and not s.archived]
        else:
            archive = []
            log.warning("Tree listing incomplete; nothing archived", extra={"head_sha": snapshot.head_sha})
        chunks = self._chunks(plan)
        total = len(plan.changed)
        if progress:
            progress(0, total)
        read = _Read(plan)
        changes = ReaderChanges()
        written = archived = done = 0
        slowest = 0.0
        for number, files in enumerate(chunks):
            if number == 0 and first is not None:
                chunk = first
            elif not deadline.allows(self._commit_margin_s + slowest):
                read.left = [f.path for rest in chunks[number:] for f in rest]
                _log_left(read.left, deadline, self._commit_margin_s + slowest)
                break
            else:
                chunk = self._read_chunk(repo, plan, files, deadline)
            began = deadline.remaining()
            last = number == len(chunks) - 1
            w, a = self._apply(user_id, chunk.parsed, archive if last else [], index, changes)
            written, archived = written + w, archived + a
            read.add(chunk)
            done += len(files)
            if deadline.limited:
                slowest = max(slowest, chunk.read_s + began - deadline.remaining())
            if progress:
                progress(done, total)
        if not chunks:
            written, archived = self._apply(user_id, [], archive, index, changes)
        self._remember_failures(user_id, read, known)
        summary = self._summary(read, written, archived, index)
        summary.changes = changes
        return summary

    def _apply(
        self,
        user_id: int,
        parsed: Sequence[ParsedArticle],
        archive: Sequence[str],
        index: Mapping[str, Any],
        changes: ReaderChanges,
    ) -> tuple[int, int]:
        """Commit ``parsed`` in bounded transactions, archiving in the last one; (written, archived).
        What readers see change is added to ``changes``.

        The index was read under the user's lock, which is still held: apply need not read it again
        (the batches write disjoint slugs, so each one's part of the index is still what is stored).
        Each batch is committed on its own and kept if a later one fails or the run is cut short."""
        batches = list(transaction_batches(parsed, self._batch_max_articles, self._batch_max_bytes))
        written = archived = 0
        for number, batch in enumerate(batches or [[]], start=1):
            last = number == max(len(batches), 1)
            result = self._store.apply(user_id, batch, archive if last else [], self._clock(), index=index)
            written += result.written
            archived += result.archived
            changes.add(result)
        return written, archived

    def _summary(self, read: _Read, written: int, archived: int, index: Mapping[str, Any]) -> SyncSummary:
        plan = read.plan
        failed_paths = {f.path for f in read.failures}
        drafts = 0
        for slug in plan.slugs:
            if slug in read.publish:
                drafts += not read.publish[slug]
            elif (stored := index.get(slug)) is not None and stored.path not in failed_paths:
                drafts += not stored.publish
        summary = SyncSummary(
            warnings=read.warnings,
            drafts=drafts,
            processed=len(plan.slugs) + plan.badly_named,
            fetched=read.fetched,
            head_sha=plan.snapshot.head_sha,
            failures=read.failures,
            written=written,
            archived=archived,
            failed=len(read.failures),
            listing_complete=plan.snapshot.complete,
            left=read.left,
        )
        summary.succeeded = summary.processed - summary.failed - len(summary.left)
        log.info(
            "Reconciled articles",
            extra={**summary.log_fields(), "duration_ms": round((time.monotonic() - plan.started) * 1000, 1)},
        )
        return summary

    def _remember_failures(self, user_id: int, read: _Read, known: _Known) -> None:
        """Remember this read's parse failures by blob; forget those of files that now parse, changed,
        or are gone (only from a complete listing). No statement when nothing changed."""
        new = [
            RememberedFailure(slug, file.path, file.sha, message)
            for slug, file, message in read.parse_failures
            if known.failures.get(slug) != RememberedFailure(slug, file.path, file.sha, message)
        ]
        still_failing = {f.path for f in read.failures}
        parsed = set(read.publish)
        forget = [
            slug
            for slug, failure in known.failures.items()
            if slug in parsed
            or (read.plan.snapshot.complete and slug not in read.plan.slugs)
            or (slug in read.plan.slugs and failure.path not in still_failing)
        ]
        if new or forget:
            self._store.remember_failures(user_id, new, forget)


@dataclass(frozen=True)
class _Known:
    """What the database knows before a read: the article index and the remembered parse failures."""

    index: Mapping[str, Any]
    failures: Mapping[str, RememberedFailure]


@dataclass(frozen=True)
class _Plan:
    """A sync's plan: the listing, the article slugs in it, and which files changed since the last run."""

    snapshot: Snapshot
    slugs: set[str]
    badly_named: int  # article files whose name cannot be a slug (among the failures)
    changed: list[RepoFile]
    failures: list[FileFailure]  # found without reading: badly named, or remembered as broken
    slug_by_path: dict[str, str]
    started: float  # time.monotonic() when the sync began, for the log's duration


@dataclass
class _Chunk:
    """One chunk of changed files, fetched and parsed: held until it is committed."""

    fetched: int
    read_s: float = 0.0  # how long fetching and parsing it took (on the deadline's clock)
    parsed: list[ParsedArticle] = field(default_factory=list)
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    parse_failures: list[tuple[str, RepoFile, str]] = field(default_factory=list)  # (slug, file, reason)


@dataclass
class _Read:
    """What the committed chunks leave for the summary: no article contents, only their outcome."""

    plan: _Plan
    fetched: int = 0
    publish: dict[str, bool] = field(default_factory=dict)  # slug -> publish, of the articles written
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    parse_failures: list[tuple[str, RepoFile, str]] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.failures = list(self.plan.failures)

    def add(self, chunk: _Chunk) -> None:
        self.fetched += chunk.fetched
        self.publish.update((a.slug, a.publish) for a in chunk.parsed)
        self.failures += chunk.failures
        self.warnings += chunk.warnings
        self.parse_failures += chunk.parse_failures


def repo_of(push: PushRef) -> RepoRef:
    return RepoRef(push.repository, push.branch, push.installation_id, pushed_head=push.after)


def _log_failures(failures: Sequence[FileFailure]) -> None:
    for failure in failures:
        log.warning(
            "Article failed",
            extra={
                "path": failure.path,
                "error": failure.message,
                "retryable": failure.retryable,
                "remembered": failure.remembered,
            },
        )


# Paths named in the log line and the delivery record when the budget runs out (the count is whole).
LEFT_PATHS_SHOWN = 50


def _log_left(left: Sequence[str], deadline: Deadline, needed_s: float) -> None:
    log.warning(
        "Time budget reached; files left for the next run",
        extra={
            "left": len(left),
            "left_paths": list(left[:LEFT_PATHS_SHOWN]),
            "remaining_s": round(deadline.remaining(), 1),
            "needed_s": round(needed_s, 1),
        },
    )


OTHER_REPOSITORY = "other repository"


def same_name(a: str, b: str) -> bool:
    """GitHub's owner/name comparison: case-insensitive."""
    return a.casefold() == b.casefold()


def follows(user: Any, push: PushRef) -> bool:
    """Whether the push comes from the repository the user's blog follows: by GitHub's id once both
    sides know it (a deleted repository's name can be reused), else by name. A user who follows no
    repository yet follows the first one that pushes (and it is pinned)."""
    if user.repository is None:
        return True
    if user.repository_id is not None and push.repository_id is not None:
        return bool(user.repository_id == push.repository_id)
    return same_name(user.repository, push.repository)


# Marks a failure in the delivery record that may pass on retry; a replay of that head syncs again.
RETRYABLE_MARK = "[retryable]"


def _delivery_error(summary: SyncSummary) -> str | None:
    """The delivery record's error text; what may pass on retry comes first, so its mark survives the cut."""
    parts = [] if summary.listing_complete else [f"tree listing truncated, nothing archived {RETRYABLE_MARK}"]
    if summary.left:
        shown = ", ".join(summary.left[:LEFT_PATHS_SHOWN])
        more = len(summary.left) - LEFT_PATHS_SHOWN
        parts.append(
            f"time budget reached, {len(summary.left)} files left for the next run {RETRYABLE_MARK}: {shown}"
            + (f" and {more} more" if more > 0 else "")
        )
    parts += [_failure_text(f) for f in sorted(summary.failures, key=lambda f: not f.retryable)]
    parts += [f"warning: {w.path}: {w.message}" for w in summary.warnings]
    return "; ".join(parts)[:2000] or None


def _failure_text(failure: FileFailure) -> str:
    text = f"{failure.path}: {failure.message}"
    return f"{text} {RETRYABLE_MARK}" if failure.retryable else text


def _slug_error(path: str, articles_dir: str) -> str:
    try:
        parse_article(path, "", b"", articles_dir=articles_dir)
    except ArticleParseError as exc:
        return str(exc)
    return "file name is not a valid slug"
