"""Zenn books, the read side: published books, one book with its chapters, one chapter.

"Published" as for articles: ``published: true`` in its config, its folder still in the repository
(not archived), and a publication time (the first sync that saw it published). Order: newest
``published_at`` first, ties by slug descending, so the articles' keyset cursor pages books too.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from peewee import fn

from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.book_records import BookPage, BookView, ChapterSummaryView, ChapterView
from function.store.models import Book, BookChapter, User, utc_now
from function.store.records import Keyset, SitemapEntry

_BOOK_COLUMNS = (
    Book.id,
    Book.slug,
    Book.title,
    Book.summary,
    Book.tags,
    # The asset URL when there is one, else the repository path: what readers get.
    fn.COALESCE(Book.cover_url, Book.cover),
    Book.chapter_count,
    Book.published_at,
    Book.created_at,
    Book.updated_at,
)


class BookReadQueries(StoreBase):
    @_translated
    def published_books_page(
        self, user_name: str, *, limit: int, after: Keyset | None = None, now: datetime | None = None
    ) -> BookPage | None:
        """One page of the user's published books; None when there is no such user. One statement
        (two when the page is empty: does the user exist?)."""
        query = self._published(user_name, _BOOK_COLUMNS, now)
        if after is not None:
            query = query.where(
                (Book.published_at < after.published_at)
                | ((Book.published_at == after.published_at) & (Book.slug < after.slug))
            )
        rows = self._rows(query.order_by(Book.published_at.desc(), Book.slug.desc()).limit(limit + 1))
        if not rows:
            return BookPage([], None) if self._user_named(user_name) else None
        views = [_book_view(row) for row in rows[:limit]]
        last = views[-1]
        return BookPage(views, Keyset(last.published_at, last.slug) if len(rows) > limit else None)

    @_translated
    def published_book(self, user_name: str, slug: str, *, now: datetime | None = None) -> BookView | None:
        """One published book with its chapters in order (two statements), or None."""
        row = self._first(self._published(user_name, _BOOK_COLUMNS, now).where(Book.slug == slug))
        if row is None:
            return None
        query = (
            BookChapter.select(BookChapter.slug, BookChapter.title, BookChapter.position)
            .where(BookChapter.book == row[0])
            .order_by(BookChapter.position)
        )
        chapters = tuple(ChapterSummaryView(*chapter) for chapter in self._rows(query))
        return _book_view(row, chapters)

    @_translated
    def published_chapter(
        self, user_name: str, book_slug: str, chapter_slug: str, *, now: datetime | None = None
    ) -> ChapterView | None:
        """One chapter of a published book, with the book's summary (one statement), or None."""
        columns = (
            *_BOOK_COLUMNS,
            BookChapter.slug,
            BookChapter.title,
            BookChapter.position,
            BookChapter.content,
            BookChapter.content_html,
            BookChapter.toc,
            BookChapter.updated_at,
        )
        query = (
            self._published(user_name, columns, now)
            .join(BookChapter, on=(BookChapter.book == Book.id))
            .where(Book.slug == book_slug, BookChapter.slug == chapter_slug)
        )
        row = self._first(query)
        if row is None:
            return None
        book = _book_view(row[: len(_BOOK_COLUMNS)])
        slug, title, position, content, html, toc, updated = row[len(_BOOK_COLUMNS) :]
        return ChapterView(slug, title, position, content, html, tuple(json.loads(toc)), book, updated)

    @_translated
    def book_sitemap_entries(self, user_name: str, *, now: datetime | None = None) -> list[SitemapEntry]:
        """Slug and times of every published book, newest first (empty for no such user)."""
        query = self._published(user_name, (Book.slug, Book.published_at, Book.updated_at), now)
        rows = self._rows(query.order_by(Book.published_at.desc(), Book.slug.desc()))
        return [SitemapEntry(slug, published, updated) for slug, published, updated in rows]

    def _published(self, user_name: str, columns: tuple[Any, ...], now: datetime | None) -> Any:
        return (
            Book.select(*columns)
            .join(User, on=(Book.user == User.id))
            .where(
                User.name == user_name,
                Book.publish,
                ~Book.archived,
                Book.published_at.is_null(False),
                Book.published_at <= (now or utc_now()),
            )
        )

    def _user_named(self, user_name: str) -> bool:
        return bool(User.select(User.id).where(User.name == user_name).bind(self._db).exists())


def _book_view(row: tuple[Any, ...], chapters: tuple[ChapterSummaryView, ...] = ()) -> BookView:
    book_id, slug, title, summary, tags, cover, count, published, created, updated = row
    return BookView(
        id=book_id,
        slug=slug,
        title=title,
        summary=summary,
        tags=tuple(json.loads(tags)),
        cover=cover,
        chapter_count=count,
        published_at=published,
        created_at=created,
        updated_at=updated,
        chapters=chapters,
    )
