"""What an author sees of their own repository (the local preview): every article and book that is in
it, drafts and scheduled ones included, each with whether readers see it yet.

The read routes serve published things only (``reads``, ``book_reads``); these queries drop that filter
and keep only "not archived" (the file is still in the repository). Small, whole-repository reads: the
preview runs on a local throwaway database of one author.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.models import Article, ArticleBody, ArticleTag, Book, BookChapter, Tag, User


@dataclass(frozen=True)
class AuthorArticle:
    slug: str
    path: str
    title: str
    emoji: str | None
    type: str | None
    tags: tuple[str, ...]
    publish: bool
    published_at: datetime | None  # naive UTC; None for a draft never published
    updated_at: datetime
    content_html: str = ""  # empty in lists
    toc: tuple[dict[str, Any], ...] = ()

    def scheduled(self, now: datetime) -> bool:
        """Published, but readers see it only from ``published_at`` on."""
        return self.publish and self.published_at is not None and self.published_at > now


@dataclass(frozen=True)
class AuthorChapter:
    slug: str
    path: str
    title: str
    position: int
    content_html: str = ""  # empty in a book's list of chapters
    toc: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class AuthorBook:
    slug: str
    title: str
    summary: str
    tags: tuple[str, ...]
    cover: str | None  # the stored image's reference (a URL once served), else the repository path
    publish: bool
    published_at: datetime | None
    updated_at: datetime
    chapters: tuple[AuthorChapter, ...] = ()


_ARTICLE_COLUMNS = (
    Article.id,
    Article.slug,
    Article.path,
    Article.title,
    Article.emoji,
    Article.type,
    Article.publish,
    Article.published_at,
    Article.updated_at,
)
_BOOK_COLUMNS = (
    Book.id,
    Book.slug,
    Book.title,
    Book.summary,
    Book.tags,
    Book.cover_url,
    Book.cover,
    Book.publish,
    Book.published_at,
    Book.updated_at,
)


class AuthorReads(StoreBase):
    @_translated
    def articles(self, user_name: str) -> list[AuthorArticle]:
        """Every article in the repository, without bodies: drafts first, then newest first."""
        rows = self._rows(self._articles(user_name, _ARTICLE_COLUMNS))
        tags = self._tags_of([row[0] for row in rows])
        found = [_article(row, tags.get(row[0], ())) for row in rows]
        return sorted(found, key=_reading_order)

    @_translated
    def article(self, user_name: str, slug: str) -> AuthorArticle | None:
        """One article of the repository with its HTML, draft or not; None when there is none."""
        columns = (*_ARTICLE_COLUMNS, ArticleBody.content_html, ArticleBody.toc)
        query = self._articles(user_name, columns).join_from(
            Article, ArticleBody, on=(ArticleBody.article == Article.id)
        )
        row = self._first(query.where(Article.slug == slug))
        if row is None:
            return None
        tags = self._tags_of([row[0]])
        html, toc = row[len(_ARTICLE_COLUMNS) :]
        return _article(row, tags.get(row[0], ()), html, toc)

    @_translated
    def books(self, user_name: str) -> list[AuthorBook]:
        """Every book in the repository, without chapters: drafts first, then newest first."""
        rows = self._rows(self._books(user_name))
        return sorted((_book(row) for row in rows), key=_reading_order)

    @_translated
    def book(self, user_name: str, slug: str) -> AuthorBook | None:
        """One book with its chapters in order (without their HTML); None when there is none."""
        row = self._first(self._books(user_name).where(Book.slug == slug))
        if row is None:
            return None
        query = (
            BookChapter.select(BookChapter.slug, BookChapter.path, BookChapter.title, BookChapter.position)
            .where(BookChapter.book == row[0])
            .order_by(BookChapter.position)
        )
        chapters = tuple(AuthorChapter(*chapter) for chapter in self._rows(query))
        return _book(row, chapters)

    @_translated
    def chapter(self, user_name: str, book_slug: str, chapter_slug: str) -> AuthorChapter | None:
        """One chapter with its HTML; None when the book or the chapter is not there."""
        query = (
            BookChapter.select(
                BookChapter.slug,
                BookChapter.path,
                BookChapter.title,
                BookChapter.position,
                BookChapter.content_html,
                BookChapter.toc,
            )
            .join(Book, on=(BookChapter.book == Book.id))
            .join(User, on=(Book.user == User.id))
            .where(
                User.name == user_name,
                ~Book.archived,
                Book.slug == book_slug,
                BookChapter.slug == chapter_slug,
            )
        )
        row = self._first(query)
        if row is None:
            return None
        slug, path, title, position, html, toc = row
        return AuthorChapter(slug, path, title, position, html, tuple(json.loads(toc)) if toc else ())

    def _articles(self, user_name: str, columns: tuple[Any, ...]) -> Any:
        return (
            Article.select(*columns)
            .join(User, on=(Article.user == User.id))
            .where(User.name == user_name, ~Article.archived)
        )

    def _books(self, user_name: str) -> Any:
        return (
            Book.select(*_BOOK_COLUMNS)
            .join(User, on=(Book.user == User.id))
            .where(User.name == user_name, ~Book.archived)
        )

    def _tags_of(self, article_ids: list[int]) -> dict[int, tuple[str, ...]]:
        if not article_ids:
            return {}
        query = (
            ArticleTag.select(ArticleTag.article, Tag.path)
            .join(Tag, on=(ArticleTag.tag == Tag.id))
            .where(ArticleTag.article.in_(article_ids))
        )
        found: dict[int, list[str]] = {}
        for article_id, path in self._rows(query):
            found.setdefault(article_id, []).append(path)
        return {article_id: tuple(sorted(paths)) for article_id, paths in found.items()}


def _article(
    row: tuple[Any, ...], tags: tuple[str, ...], html: str = "", toc: str | None = None
) -> AuthorArticle:
    _id, slug, path, title, emoji, type_, publish, published_at, updated_at = row[: len(_ARTICLE_COLUMNS)]
    return AuthorArticle(
        slug=slug,
        path=path,
        title=title,
        emoji=emoji,
        type=type_,
        tags=tags,
        publish=bool(publish),
        published_at=published_at,
        updated_at=updated_at,
        content_html=html,
        toc=tuple(json.loads(toc)) if toc else (),
    )


def _book(row: tuple[Any, ...], chapters: tuple[AuthorChapter, ...] = ()) -> AuthorBook:
    _id, slug, title, summary, tags, cover_url, cover, publish, published_at, updated_at = row
    return AuthorBook(
        slug=slug,
        title=title,
        summary=summary,
        tags=tuple(json.loads(tags)) if tags else (),
        cover=cover_url or cover,
        publish=bool(publish),
        published_at=published_at,
        updated_at=updated_at,
        chapters=chapters,
    )


def _reading_order(item: AuthorArticle | AuthorBook) -> tuple[bool, float, str]:
    # Drafts (what the author is working on) first, by last change; then as readers see them.
    when = item.published_at if item.publish and item.published_at else item.updated_at
    return (item.publish, -(when - _EPOCH).total_seconds(), item.slug)


_EPOCH = datetime(1970, 1, 1)
