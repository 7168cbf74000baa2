"""The parsed form of one article file."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from function.articles.toc import TocEntry


@dataclass(frozen=True)
class ParsedArticle:
    slug: str  # file name without ".md"
    path: str  # repository path
    blob_sha: str
    title: str
    type: str | None
    description: str | None
    thumbnail: str | None
    publish: bool
    tags: tuple[str, ...]  # normalised tag paths, e.g. ("tech/aws/lambda",), sorted, unique
    content: str  # Markdown body without front matter
    content_html: str  # rendered and sanitized HTML (raw HTML escaped unless allowed, sanitized always)
    # sha256 over title, type, description, thumbnail, publish, tags and content: "did it change?"
    content_hash: str
    toc: tuple[TocEntry, ...] = ()  # top-level h1-h3 with their ids, in document order
    emoji: str | None = None  # Zenn's emoji, served as the Article's "emoji"
    # naive UTC: the front matter's published_at/date (it always wins over a stored time), or None
    published_at: datetime | None = None
    # naive UTC: 00:00 of the slug's leading date (2024-01-21-...), for an article without a time yet
    slug_date: datetime | None = None
    warnings: tuple[str, ...] = ()  # e.g. unknown front matter keys: reported, never a failure
    # naive UTC: when the file was added, from the repository's history (the source's ``added_at``);
    # dates an article with no date of its own when it is first published. Not part of the content.
    added_at: datetime | None = None
