"""The JSON shape of books and chapters (camelCase, as articles are): ``BookSummary``, ``Book`` and
``Chapter``."""

from __future__ import annotations

from typing import Any

from function.api.serialise import iso_utc
from function.store.book_records import BookView, ChapterView


def cover_value(cover: str | None) -> str | None:
    """What a book's ``cover`` serves: the store gives the cover's asset URL when blog-api stores the
    repository's images, else its repository path (``books/<slug>/cover.png``); null without a cover."""
    return cover


def book_summary_json(view: BookView) -> dict[str, Any]:
    """A ``BookSummary``: the book without its chapter list."""
    return {
        "bookId": str(view.id),
        "slug": view.slug,
        "title": view.title,
        "summary": view.summary,
        "tags": list(view.tags),
        "cover": cover_value(view.cover),
        "chapterCount": view.chapter_count,
        "publishedAt": iso_utc(view.published_at),
        "createdAt": iso_utc(view.created_at),
        "updatedAt": iso_utc(view.updated_at),
    }


def book_json(view: BookView) -> dict[str, Any]:
    """A ``Book``: the summary and its chapters in reading order."""
    chapters = [{"slug": c.slug, "title": c.title, "position": c.position} for c in view.chapters]
    return {**book_summary_json(view), "chapters": chapters}


def chapter_json(view: ChapterView) -> dict[str, Any]:
    """A ``Chapter``: rendered as an article is, with its book's summary."""
    return {
        "slug": view.slug,
        "title": view.title,
        "position": view.position,
        "content": view.content,
        "contentHtml": view.content_html,
        "toc": list(view.toc),
        "book": book_summary_json(view.book),
        "updatedAt": iso_utc(view.updated_at),
    }
