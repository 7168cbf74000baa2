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
from datetime import UTC, datetime
from typing import Any, Protocol

from function.articles.parse import is_article_path, parse_article, slug_for_path
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError, NotFound, UnknownInstallation
from function.sources.port import ArticleSource, FetchFailure, RepoRef, Snapshot
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
    skipped_reason: str | None = None

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
        if self.skipped_reason:
            return "skipped"
        return "success" if not self.failures else "partial"

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
            "head_sha": self.head_sha,
        }


class Store(Protocol):
    """The part of ``function.store.facade.PeeweeStore`` the worker uses."""

    def installation_user_locked(self, installation_id: int, timeout_s: float) -> Any: ...
    def get_user(self, name: str) -> Any: ...
    def set_repository(self, user_id: int, repository: str) -> None: ...
    def load_index(self, user_id: int) -> Mapping[str, Any]: ...
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
        clock: Clock = utc_now,
        # Under the database read time-out (30 s), or a long wait would look like an outage.
        lock_timeout_s: float = 25.0,
    ) -> None:
        self._store = store
        self._source = source
        self._articles_dir = articles_dir
        self._allow_raw_html = allow_raw_html
        self._clock = clock
        self._lock_timeout_s = lock_timeout_s

    def process_push(self, delivery: DeliveryInfo, push: PushRef) -> SyncSummary:
        """Process one push delivery, at-least-once safe.

        The per-user lock serialises deliveries for one user, and the head is read inside it, so
        two deliveries that run at once or finish out of order can never roll content back. A
        delivery already recorded as a success is skipped cheaply; a failed one runs again.
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
            repo = RepoRef(push.repository, push.branch, push.installation_id, pushed_head=push.after)
            # GitHub and the database are both tens of milliseconds away, and neither needs the other
            # until the writes: the repository is read (listing, changed files, parsing) on another
            # thread as soon as the lock is held (the head must be read under it), while this thread
            # loads the index the read diffs against, then asks whether the delivery is a duplicate and
            # records its start. A duplicate wastes at most that read; every other delivery saves the
            # database's round trips. The block ends only once the read is over.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read") as pool:
                index_loaded: Future[Mapping[str, Any]] = Future()
                reading = pool.submit(self._read_when_indexed, repo, index_loaded)
                try:
                    index = self._store.load_index(user.id)
                except BaseException as exc:
                    index_loaded.set_exception(exc)
                    raise
                index_loaded.set_result(index)
                previous = self._store.get_delivery(delivery.delivery_id)
                if previous is not None and previous.outcome == "success":
                    return SyncSummary(skipped_reason="delivery already processed")
                return self._process_locked(user, delivery, push, index, reading)

    def _start(self, delivery: DeliveryInfo, push: PushRef) -> None:
        self._store.start_delivery(
            delivery.delivery_id,
            delivery.event,
            push.installation_id,
            push.repository,
            delivery.received_at,
            self._clock(),
        )

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
        index: Mapping[str, Any],
        reading: Future[_Read],
    ) -> SyncSummary:
        """The delivery's work once its user's lock is held and the repository's read is on the way."""
        self._start(delivery, push)
        if user.repository != push.repository:
            self._store.set_repository(user.id, push.repository)
        try:
            summary = self._write(user.id, reading.result(), index)
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
            error="; ".join(f"{f.path}: {f.message}" for f in summary.failures)[:2000] or None,
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
        """A full scan for one user now (the CLI's ``sync``), under the same lock as deliveries.
        ``repository`` (owner/name) overrides the one learned from the user's pushes."""
        user = self._store.get_user(name)
        if user is None:
            raise NotFound(f"no user named {name!r}")
        repo = RepoRef(repository or user.repository or "", branch, user.installation_id)
        with self._store.user_lock(user.id, self._lock_timeout_s):
            index = self._store.load_index(user.id)
            read = self._read(repo, self._source.snapshot(repo), index, progress)
            return self._write(user.id, read, index)

    def _read_when_indexed(self, repo: RepoRef, index_loaded: Future[Mapping[str, Any]]) -> _Read:
        snapshot = self._source.snapshot(repo)
        return self._read(repo, snapshot, index_loaded.result())

    def _read(
        self, repo: RepoRef, snapshot: Snapshot, index: Mapping[str, Any], progress: Progress | None = None
    ) -> _Read:
        """Diff the listing against the index, fetch and parse what changed: no database access."""
        started = time.monotonic()
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
        changed = [
            file
            for slug, file in files_by_slug.items()
            if (stored := index.get(slug)) is None or stored.blob_sha != file.sha or stored.archived
        ]
        if progress:
            progress(0, len(changed))

        parsed: list[ParsedArticle] = []
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
                        )
                    )
                except ArticleParseError as exc:
                    failures.append(FileFailure(result.path, str(exc), retryable=False))
            if progress:
                progress(done, len(changed))
        for failure in failures:
            log.warning(
                "Article failed",
                extra={"path": failure.path, "error": failure.message, "retryable": failure.retryable},
            )
        return _Read(snapshot, set(files_by_slug), badly_named, len(changed), parsed, failures, started)

    def _write(self, user_id: int, read: _Read, index: Mapping[str, Any]) -> SyncSummary:
        """Apply a read to the database and sum it up."""
        snapshot = read.snapshot
        # A truncated listing may just be missing paths: never archive from it.
        if snapshot.complete:
            archive = [slug for slug, s in index.items() if slug not in read.slugs and not s.archived]
        else:
            archive = []
            log.warning("Tree listing incomplete; nothing archived", extra={"head_sha": snapshot.head_sha})

        # The index was read under the user's lock, which is still held: apply need not read it again.
        result = self._store.apply(user_id, read.parsed, archive, self._clock(), index=index)
        summary = SyncSummary(
            processed=len(read.slugs) + read.badly_named,
            fetched=read.fetched,
            head_sha=snapshot.head_sha,
            failures=read.failures,
            written=result.written,
            archived=result.archived,
            failed=len(read.failures),
        )
        summary.succeeded = summary.processed - summary.failed
        log.info(
            "Reconciled articles",
            extra={**summary.log_fields(), "duration_ms": round((time.monotonic() - read.started) * 1000, 1)},
        )
        return summary


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


def _slug_error(path: str, articles_dir: str) -> str:
    try:
        parse_article(path, "", b"", articles_dir=articles_dir)
    except ArticleParseError as exc:
        return str(exc)
    return "file name is not a valid slug"
