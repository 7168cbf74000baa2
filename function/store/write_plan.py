"""The write plan of one ``apply``: from the given articles and what is stored of them, the rows to upsert,
the articles whose tags change, and what readers will see change. Pure: no database access.

(The worker's ``ReadPlan``, which files to read, is another thing: ``function.worker.sync.plan``.)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from function.articles.parsed import ParsedArticle
from function.store.records import ApplyResult, StoredArticle


@dataclass(frozen=True)
class Existing:
    slug: str
    id: int
    content_hash: str
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    archived: bool
    tags_hash: str
    publish: bool
    output_hash: str | None = None

    @classmethod
    def of(cls, stored: StoredArticle) -> Existing:
        return cls(
            stored.slug,
            stored.id,
            stored.content_hash,
            stored.published_at,
            stored.created_at,
            stored.updated_at,
            stored.archived,
            stored.tags_hash,
            stored.publish,
            stored.output_hash,
        )


def served(publish: bool, archived: bool, published_at: datetime | None, now: datetime) -> bool:
    """Whether readers see an article so: published, live and not scheduled for later (the read
    routes' rule)."""
    return bool(publish) and not archived and published_at is not None and published_at <= now


def served_before(stored: StoredArticle | Existing, now: datetime) -> bool:
    return served(stored.publish, stored.archived, stored.published_at, now)


class WritePlan:
    """The rows to upsert and the articles whose tags must be rewritten, from what is stored.

    ``rows``: every given article's index row (``articles``). ``bodies``: every given article's body
    row (``article_bodies``) by slug."""

    def __init__(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        existing: dict[str, Existing],
        now: datetime,
        render_fingerprint: str | None = None,
    ) -> None:
        self.existing = existing
        self.rows: list[dict[str, Any]] = []
        self.bodies: dict[str, dict[str, Any]] = {}
        self.retag: list[ParsedArticle] = []
        self.changed: list[ParsedArticle] = []  # new, or with other content: indexed for search again
        self.written = self.unchanged = 0
        self.published: list[str] = []
        self.updated: list[str] = []
        self.unpublished: list[str] = []
        for article in articles:
            old = existing.get(article.slug)
            toc = toc_json(article)
            output = output_hash(article.content_html, toc)
            # The same content, rendered to the same HTML (an unknown stored HTML counts as the same).
            same = (
                old is not None
                and old.content_hash == article.content_hash
                and not old.archived
                and old.output_hash in (None, output)
            )
            if same:
                self.unchanged += 1
            else:
                self.written += 1
                self.changed.append(article)
            if (old is None and article.tags) or (
                old is not None and old.tags_hash != tags_hash(article.tags)
            ):
                self.retag.append(article)
            row = article_row(user_id, article, old, same, now)
            row.update(output_hash=output, render_fingerprint=render_fingerprint)
            self.rows.append(row)
            # Every given article's body is written, as its row is: a given article was read again
            # (its blob changed, it is rendered anew, or a rebuild asked for it), and a rebuild must
            # replace a stored body even where the hashes say it is the same.
            self.bodies[article.slug] = body_row(article, toc=toc)
            self._note_what_readers_see(article.slug, old, row, same, now)

    def _note_what_readers_see(
        self, slug: str, old: Existing | None, row: dict[str, Any], same: bool, now: datetime
    ) -> None:
        was = old is not None and served_before(old, now)
        now_served = served(row["publish"], False, row["published_at"], now)
        if now_served and not was:
            self.published.append(slug)
        elif was and not now_served:
            self.unpublished.append(slug)
        elif was and not same:
            self.updated.append(slug)

    def result(self, *, archived: int, hidden: Sequence[str]) -> ApplyResult:
        return ApplyResult(
            written=self.written,
            unchanged=self.unchanged,
            archived=archived,
            published=tuple(self.published),
            updated=tuple(self.updated),
            unpublished=(*self.unpublished, *hidden),
        )


def output_hash(html: str, toc: str) -> str:
    """sha256 hex of what a render gave readers: the HTML and the table of contents (as stored, JSON).
    Unlike ``content_hash``, which says whether the author changed anything, it says whether the HTML
    did: after an upgrade that renders differently, only the articles whose HTML changed are updates."""
    digest = hashlib.sha256(html.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(toc.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def toc_json(article: ParsedArticle) -> str:
    """The table of contents as the ``toc`` column stores it."""
    return json.dumps([entry.as_json() for entry in article.toc], ensure_ascii=False)


def tags_hash(tags: Sequence[str]) -> str:
    """A fingerprint of an article's tag set (order and duplicates do not matter)."""
    return hashlib.sha256("\n".join(sorted(set(tags))).encode()).hexdigest()


def body_row(article: ParsedArticle, *, toc: str) -> dict[str, Any]:
    """An article's ``article_bodies`` row, without its key (the article's id, known once written)."""
    return {"content": article.content, "content_html": article.content_html, "toc": toc}


def article_row(
    user_id: int, article: ParsedArticle, old: Existing | None, same: bool, now: datetime
) -> dict[str, Any]:
    if old is None:
        created_at, updated_at = now, now
    else:
        created_at = old.created_at
        updated_at = old.updated_at if same else now
    return {
        "user": user_id,
        "slug": article.slug,
        "path": article.path,
        "blob_sha": article.blob_sha,
        "title": article.title,
        "type": article.type,
        "description": article.description,
        "thumbnail": article.thumbnail,
        "emoji": article.emoji,
        "content_hash": article.content_hash,
        "tags_hash": tags_hash(article.tags),
        "publish": article.publish,
        "archived": False,
        "published_at": publication_time(article, old.published_at if old else None, now),
        "archived_at": None,
        "created_at": created_at,
        "updated_at": updated_at,
    }


def publication_time(article: ParsedArticle, stored: datetime | None, now: datetime) -> datetime | None:
    """The front matter's time always wins (also over a stored one); else a stored time is kept (even if
    the article is unpublished later); else, once published, the slug's leading date, or the time its
    file was added in the repository's history, or now."""
    if article.published_at is not None:
        return article.published_at
    if stored is not None:
        return stored
    if article.publish:
        return article.slug_date or article.added_at or now
    return None
