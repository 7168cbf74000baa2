"""The plain records of Zenn books that the store takes and hands out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class StoredChapter:
    """What a sync needs to know of a stored chapter (no content)."""

    slug: str
    path: str
    blob_sha: str
    position: int
    content_hash: str
    render_fingerprint: str | None = None  # what its HTML was rendered with (None: not recorded)
    output_hash: str | None = None  # the hash of its HTML and table of contents (None: not known)


@dataclass(frozen=True)
class StoredBook:
    """What a sync needs to know of a stored book: its files' blobs, its parsed config, its chapters."""

    id: int
    slug: str
    config_path: str
    config_sha: str
    config: str  # BookConfig as JSON
    cover: str | None
    cover_sha: str | None
    content_hash: str
    publish: bool
    archived: bool
    published_at: datetime | None
    chapters: Mapping[str, StoredChapter]  # by chapter slug
    cover_url: str | None = None  # the cover's stored reference (``asset:<key>``), when images are stored
    render_fingerprint: str | None = None  # what it was written with (None: not recorded)


@dataclass(frozen=True)
class ChapterWrite:
    """A chapter to write: ``parsed`` (a ParsedChapter) when its file was read, else None and only its
    place changes (its content is what is stored)."""

    slug: str
    position: int
    parsed: Any = None


@dataclass(frozen=True)
class BookWrite:
    """One book as a sync leaves it."""

    slug: str
    config_path: str
    config_sha: str
    config: Any  # BookConfig
    cover: str | None
    cover_sha: str | None
    content_hash: str
    chapters: tuple[ChapterWrite, ...]
    cover_url: str | None = None  # the cover's stored reference (None: readers get the path)
    render_fingerprint: str | None = None  # what its chapters read now were rendered with


@dataclass
class BookChanges:
    """Book slugs readers see appear, change or disappear in one sync (for the outgoing webhooks)."""

    published: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unpublished: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.published or self.updated or self.unpublished)

    def to_json(self) -> dict[str, list[str]]:
        return {"published": self.published, "updated": self.updated, "unpublished": self.unpublished}


@dataclass(frozen=True)
class ChapterSummaryView:
    slug: str
    title: str
    position: int


@dataclass(frozen=True)
class BookView:
    id: int
    slug: str
    title: str
    summary: str
    tags: tuple[str, ...]
    cover: str | None  # the stored reference when there is one (a URL once served), else the repository path
    chapter_count: int
    published_at: datetime
    created_at: datetime
    updated_at: datetime
    chapters: tuple[ChapterSummaryView, ...] = ()


@dataclass(frozen=True)
class ChapterView:
    slug: str
    title: str
    position: int
    content: str
    content_html: str
    toc: tuple[Any, ...]
    book: BookView
    updated_at: datetime


@dataclass(frozen=True)
class BookPage:
    books: list[BookView]
    next_key: Any  # records.Keyset of the last book when another page follows, else None
