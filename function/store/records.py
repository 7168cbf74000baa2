"""The plain records the store hands out: no Peewee objects leave the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, NotRequired, TypedDict


class DeliveryFinish(TypedDict):
    """How a delivery's processing ended, as ``finish_delivery`` records it: declared once here, taken as
    keywords by the store's method and the worker's port."""

    head_sha: str | None
    processed: int
    succeeded: int
    failed: int
    archived: int
    outcome: str
    error: str | None
    now: datetime
    written: NotRequired[int | None]
    unchanged: NotRequired[int | None]
    retryable: NotRequired[bool]  # some failure may pass on a retry (default False)


class Outcome(StrEnum):
    """How a delivery ended, as its record says (stored as the value's text)."""

    PROCESSING = "processing"  # started, not finished (or the run died)
    SUCCESS = "success"
    PARTIAL = "partial"  # only broken files failed: they fail again until their blob changes
    FAILED = "failed"  # something may pass on a retry, or the run raised
    SKIPPED = "skipped"  # nothing to sync: another repository, a head already synced
    # Nothing written: the sync would have taken most of the blog out of service (its error says how
    # many); a person carries it out, or fixes the source (function.worker.sync.mass_removal).
    HELD = "held"

    @property
    def complete(self) -> bool:
        """Whether the delivery needs no further run: a success, or partial."""
        return self in COMPLETE_OUTCOMES


COMPLETE_OUTCOMES = (Outcome.SUCCESS, Outcome.PARTIAL)


@dataclass(frozen=True)
class UserRecord:
    id: int
    name: str
    email: str
    installation_id: int | None
    repository: str | None  # "owner/name": the one repository the blog follows
    repository_id: int | None = None  # GitHub's id of it, once a push from it was seen
    source: str | None = None  # "github" or "dir:PATH": what the first sync read (None: not bound yet)
    removal_confirmed: int | None = None  # served articles one sync may archive, a person agreed


@dataclass(frozen=True)
class StoredArticle:
    """What the reconcile needs to know about a stored article (no content)."""

    id: int
    slug: str
    path: str
    blob_sha: str
    content_hash: str
    archived: bool
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    tags_hash: str
    publish: bool = False  # a draft when False: counted by sync's "drafts"
    render_fingerprint: str | None = None  # what its HTML was rendered with (None: not recorded)
    output_hash: str | None = None  # the hash of its HTML and table of contents (None: not known)


@dataclass(frozen=True)
class RememberedFailure:
    """An article file that failed to parse at this blob SHA, and why."""

    slug: str
    path: str
    blob_sha: str
    message: str


@dataclass(frozen=True)
class ApplyResult:
    written: int  # rows inserted, or updated because their content or metadata changed
    unchanged: int  # given articles whose content was the same (only path/blob SHA refreshed)
    archived: int  # rows newly archived
    # What readers see change, by slug (for the outgoing webhooks): served now and not before, served
    # before and now with new content, served before and not any more (draft again, archived, scheduled).
    published: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unpublished: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeliveryRecord:
    delivery_id: str
    event: str
    installation_id: int | None
    repository: str | None
    received_at: datetime
    started_at: datetime
    finished_at: datetime | None
    head_sha: str | None
    processed: int
    succeeded: int
    failed: int
    archived: int
    outcome: Outcome
    error: str | None
    attempts: int
    written: int | None = None  # None: recorded before these were counted
    unchanged: int | None = None
    # Some file failed for a reason that may pass (GitHub 5xx, a time-out, the time budget, a truncated
    # listing): syncing the same head again can still change something.
    retryable: bool = False

    def __post_init__(self) -> None:
        # Rows give text and NULL; the record holds the values they mean.
        object.__setattr__(self, "outcome", Outcome(self.outcome))
        object.__setattr__(self, "retryable", bool(self.retryable))


@dataclass(frozen=True)
class ArticleView:
    """A published article as the read routes serve it."""

    id: int
    slug: str
    title: str
    content: str
    content_html: str
    description: str | None
    type: str | None
    thumbnail: str | None
    tags: tuple[str, ...]  # sorted
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    emoji: str | None = None
    # [{"level", "id", "text"}] of the top-level h1-h3; empty for a row written before it existed.
    toc: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Watermark:
    """Every hook delivery with ``id <= delivery_id`` has been handled (redelivered or judged)."""

    delivery_id: int
    delivered_at: datetime  # naive UTC
    run_at: datetime  # naive UTC


@dataclass(frozen=True)
class Keyset:
    """Where a page starts: strictly after the article with this (published_at, slug), in read order."""

    published_at: datetime
    slug: str


@dataclass(frozen=True)
class Page:
    articles: list[ArticleView]  # summaries: content and content_html are ""
    next_key: Keyset | None  # None on the last page


@dataclass(frozen=True)
class SitemapEntry:
    slug: str
    published_at: datetime
    updated_at: datetime


def is_complete(record: DeliveryRecord | None) -> bool:
    """Whether a delivery's record says it is done: a success, or partial (only broken files failed).
    A failed one runs again."""
    return record is not None and record.outcome.complete
