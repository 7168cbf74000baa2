"""What a sync reports: each file that failed or warned, and the counts every delivery answers with."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from function.store.book_records import BookChanges
from function.store.records import Outcome
from function.worker.changes import ReaderChanges
from function.worker.sync.mass_removal import MassRemoval

log = logging.getLogger(__name__)

# Paths named in the log line and the delivery record when the budget runs out (the count is whole).
LEFT_PATHS_SHOWN = 50


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
    # The same for Zenn books (None: no book was synced); the counts above include the books.
    book_changes: BookChanges | None = None
    books: int = 0  # of ``processed``, the book folders
    book_drafts: int = 0  # of ``drafts``, the books
    # Set when the sync was held by the safety valve: nothing was written (function.worker.sync.mass_removal).
    held: MassRemoval | None = None
    # Books served without some chapter their config lists (missing, or that does not render): a partial
    # sync, every such chapter named among the warnings.
    incomplete: list[str] = field(default_factory=list)

    @property
    def retryable(self) -> bool:
        """True when some file failed for a reason that may pass (GitHub 5xx, time-out), or was left."""
        return bool(self.left) or any(f.retryable for f in self.failures)

    @property
    def unchanged(self) -> int:
        """Articles in sync whose row was left as it was: what tells a no-op from an edit."""
        return max(self.succeeded - self.written, 0)

    @property
    def outcome(self) -> Outcome:
        """``partial``: some files are broken (they fail again until their blob changes), or a book is
        served without some of its chapters; the delivery is complete all the same. ``failed``: some
        file may pass on a retry (GitHub 5xx, time-out). ``held``: the safety valve held it."""
        if self.skipped_reason:
            return Outcome.SKIPPED
        if self.held is not None:
            return Outcome.HELD
        if self.left:
            return Outcome.FAILED
        if not self.failures:
            return Outcome.PARTIAL if self.incomplete else Outcome.SUCCESS
        return Outcome.FAILED if self.retryable else Outcome.PARTIAL

    @property
    def head_retryable(self) -> bool:
        """Whether syncing this head again can still change something: a failure that may pass, files
        left, or a truncated listing (nothing was archived). What the delivery record keeps."""
        return self.retryable or not self.listing_complete

    def to_json(self) -> dict[str, object]:
        if self.skipped_reason:
            return {"status": "skipped", "reason": self.skipped_reason}
        if self.held is not None:
            return {
                "status": "held",
                "held": self.held.going,
                "served": self.held.served,
                "message": self.held.message,
            }
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

    def log_fields(self) -> dict[str, Any]:  # log fields, spread into a logging call's keywords
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


# The log lines of one file's failure and warning (the CLI prints both in its summary instead).
FILE_FAILED = "Article failed"
FILE_WARNING = "Article warning"


def log_failures(failures: Sequence[FileFailure]) -> None:
    for failure in failures:
        log.warning(
            FILE_FAILED,
            extra={
                "path": failure.path,
                "error": failure.message,
                "retryable": failure.retryable,
                "remembered": failure.remembered,
            },
        )
