"""The parsed form of one article file."""

from __future__ import annotations

from dataclasses import dataclass


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
    content_html: str  # rendered HTML (raw HTML escaped unless allowed)
    # sha256 over title, type, description, thumbnail, publish, tags and content: "did it change?"
    content_hash: str
