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
from function.errors import ArticleParseError, ConfigError, NotFound, UnknownInstallation
from function.sources.port import ArticleSource, FetchFailure, RepoFile, RepoRef, Snapshot
from function.store.batching import TRANSACTION_MAX_ARTICLES, TRANSACTION_MAX_BYTES, transaction_batches
from function.store.records import RememberedFailure
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo

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

    @property
    def retryable(self) -> bool:
        """True when some file failed for a reason that may pass (GitHub 5xx, time-out)."""
        return any(f.retryable for f in self.failures)

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
    ) -> None:
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

    def process_push(self, delivery: DeliveryInfo, push: PushRef) -> SyncSummary:
        """Process one push delivery, at-least-once safe.

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
            repo = RepoRef(push.repository, push.branch, push.installation_id, pushed_head=push.after)
            # GitHub and the database are both tens of milliseconds away, and neither needs the other
            # until the writes: the repository is read (listing, changed files, parsing) on another
            # thread as soon as the lock is held (the head must be read under it), while this thread
            # loads the index the read diffs against, then asks whether the delivery is a duplicate and
            # records its start. A duplicate wastes at most that read; every other delivery saves the
            # database's round trips. The block ends only once the read is over.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read") as pool:
                index_loaded: Future[_Known] = Future()
                reading = pool.submit(self._read_when_indexed, repo, index_loaded)
                try:
                    known = self._load_known(user.id)
                except BaseException as exc:
                    index_loaded.set_exception(exc)
                    raise
                index_loaded.set_result(known)
                previous = self._store.get_delivery(delivery.delivery_id)
                if previous is not None and previous.outcome in ("success", "partial"):
                    return SyncSummary(skipped_reason="delivery already processed")
                return self._process_locked(user, delivery, push, known, reading)

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
        self._store.finish_delivery(
            delivery.delivery_id,
            head_sha=last.head_sha,
            processed=0,
            succeeded=0,
            failed=0,
            archived=0,
            outcome="skipped",
            error=None,
            now=self._clock(),
        )
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
        self._store.finish_delivery(
            delivery.delivery_id,
            head_sha=None,
            processed=0,
            succeeded=0,
            failed=0,
            archived=0,
            outcome="skipped",
            error=f"{OTHER_REPOSITORY}: {pushed}; the blog follows {followed}"[:2000],
            now=self._clock(),
        )
        return SyncSummary(skipped_reason=OTHER_REPOSITORY)

    def _finish_failed(self, delivery: DeliveryInfo, error: str) -> None:
        self._store.finish_delivery(
            delivery.delivery_id,
            head_sha=None,
            processed=0,
            succeeded=0,
            failed=0,
            archived=0,
            outcome="failed",
            error=error,
            now=self._clock(),
        )

    def _process_locked(
        self,
        user: Any,
        delivery: DeliveryInfo,
        push: PushRef,
        known: _Known,
        reading: Future[_Read],
    ) -> SyncSummary:
        """The delivery's work once its user's lock is held and the repository's read is on the way."""
        self._start(delivery, push)
        if user.repository is None or (user.repository_id is None and push.repository_id is not None):
            # The first push pins the repository (a user added without one), or the first push from
            # the named repository pins its id. Never a change: ``follows`` let only these through.
            self._store.pin_repository(user.id, user.repository or push.repository, push.repository_id)
        try:
            summary = self._write(user.id, reading.result(), known)
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
    ) -> SyncSummary:
        """A full scan for one user now (the CLI's ``sync``), under the same lock as deliveries, of the
        repository the user follows. ``repository`` (owner/name) names it for a user who follows none
        yet, and pins it; for any other user it must be the one they follow (ConfigError if not)."""
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
            read = self._read(repo, self._source.snapshot(repo), known, progress)
            return self._write(user.id, read, known)

    def _read_when_indexed(self, repo: RepoRef, index_loaded: Future[_Known]) -> _Read:
        snapshot = self._source.snapshot(repo)
        return self._read(repo, snapshot, index_loaded.result())

    def _read(
        self, repo: RepoRef, snapshot: Snapshot, known: _Known, progress: Progress | None = None
    ) -> _Read:
        """Diff the listing against the index, fetch and parse what changed: no database access.
        A file that failed to parse at the same blob before is reported again but not fetched."""
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
            remembered = known.failures.get(slug)
            if remembered is not None and remembered.blob_sha == file.sha and remembered.path == file.path:
                failures.append(FileFailure(file.path, remembered.message, False, remembered=True))
            elif (stored := index.get(slug)) is None or stored.blob_sha != file.sha or stored.archived:
                changed.append(file)
        if progress:
            progress(0, len(changed))

        parsed: list[ParsedArticle] = []
        parse_failures: list[tuple[str, RepoFile, str]] = []
        by_path = {file.path: (slug, file) for slug, file in files_by_slug.items()}
        results = self._source.fetch(repo, snapshot, changed) if changed else []
        for done, result in enumerate(results, start=1):
            if isinstance(result, FetchFailure):
                failures.append(FileFailure(result.path, result.message, result.retryable))
            else:
                try:
                    parsed.append(
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
                    failures.append(FileFailure(result.path, str(exc), retryable=False))
                    slug, file = by_path[result.path]
                    parse_failures.append((slug, file, str(exc)))
            if progress:
                progress(done, len(changed))
        warnings = [FileWarning(a.path, message) for a in parsed for message in a.warnings]
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
        for warning in warnings:
            log.warning("Article warning", extra={"path": warning.path, "warning": warning.message})
        return _Read(
            snapshot,
            set(files_by_slug),
            badly_named,
            len(changed),
            parsed,
            failures,
            started,
            warnings,
            parse_failures,
        )

    def _write(self, user_id: int, read: _Read, known: _Known) -> SyncSummary:
        """Apply a read to the database and sum it up."""
        index = known.index
        snapshot = read.snapshot
        # A truncated listing may just be missing paths: never archive from it.
        if snapshot.complete:
            archive = [slug for slug, s in index.items() if slug not in read.slugs and not s.archived]
        else:
            archive = []
            log.warning("Tree listing incomplete; nothing archived", extra={"head_sha": snapshot.head_sha})

        # The index was read under the user's lock, which is still held: apply need not read it again
        # (the batches write disjoint slugs, so each one's part of the index is still what is stored).
        # Bounded transactions: each batch is committed on its own and kept if a later one fails or the
        # run is cut short; the retry finds those articles in sync and fetches only the rest. Archiving
        # comes last, once every changed article has been written.
        batches = list(transaction_batches(read.parsed, self._batch_max_articles, self._batch_max_bytes))
        written = archived = 0
        for number, batch in enumerate(batches or [[]], start=1):
            last = number == max(len(batches), 1)
            result = self._store.apply(user_id, batch, archive if last else [], self._clock(), index=index)
            written += result.written
            archived += result.archived
        self._remember_failures(user_id, read, known)
        parsed_by_slug = {a.slug: a for a in read.parsed}
        failed_paths = {f.path for f in read.failures}
        drafts = 0
        for slug in read.slugs:
            if slug in parsed_by_slug:
                drafts += not parsed_by_slug[slug].publish
            elif (stored := index.get(slug)) is not None and stored.path not in failed_paths:
                drafts += not stored.publish
        summary = SyncSummary(
            warnings=read.warnings,
            drafts=drafts,
            processed=len(read.slugs) + read.badly_named,
            fetched=read.fetched,
            head_sha=snapshot.head_sha,
            failures=read.failures,
            written=written,
            archived=archived,
            failed=len(read.failures),
            listing_complete=snapshot.complete,
        )
        summary.succeeded = summary.processed - summary.failed
        log.info(
            "Reconciled articles",
            extra={**summary.log_fields(), "duration_ms": round((time.monotonic() - read.started) * 1000, 1)},
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
        parsed = {a.slug for a in read.parsed}
        forget = [
            slug
            for slug, failure in known.failures.items()
            if slug in parsed
            or (read.snapshot.complete and slug not in read.slugs)
            or (slug in read.slugs and failure.path not in still_failing)
        ]
        if new or forget:
            self._store.remember_failures(user_id, new, forget)


@dataclass(frozen=True)
class _Known:
    """What the database knows before a read: the article index and the remembered parse failures."""

    index: Mapping[str, Any]
    failures: Mapping[str, RememberedFailure]


@dataclass
class _Read:
    """What was read from the repository for one reconcile: the listing, the article slugs in it, how
    many files were fetched, the parsed articles and the files that failed."""

    snapshot: Snapshot
    slugs: set[str]
    badly_named: int  # article files whose name cannot be a slug (among the failures)
    fetched: int
    parsed: list[ParsedArticle]
    failures: list[FileFailure]
    started: float  # time.monotonic() when the read began, for the log's duration
    warnings: list[FileWarning] = field(default_factory=list)
    parse_failures: list[tuple[str, RepoFile, str]] = field(default_factory=list)  # (slug, file, reason)


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
