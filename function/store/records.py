"""The plain records the store hands out: no Peewee objects leave the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class UserRecord:
    id: int
    name: str
    email: str
    installation_id: int | None
    repository: str | None  # "owner/name"


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


@dataclass(frozen=True)
class ApplyResult:
    written: int  # rows inserted, or updated because their content or metadata changed
    unchanged: int  # given articles whose content was the same (only path/blob SHA refreshed)
    archived: int  # rows newly archived


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
    outcome: str
    error: str | None
    attempts: int
    written: int | None = None  # None: recorded before these were counted
    unchanged: int | None = None


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


@dataclass(frozen=True)
class Watermark:
    """Every hook delivery with ``id <= delivery_id`` has been handled (redelivered or judged)."""

    delivery_id: int
    delivered_at: datetime  # naive UTC
    run_at: datetime  # naive UTC
