"""The JSON shape of books and chapters (camelCase, as articles are): ``BookSummary``, ``Book`` and
``Chapter``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from function.api.serialise import iso_utc, served_html
from function.store.book_records import BookView, ChapterView

if TYPE_CHECKING:
    from function.articles.images import ImageBases


def cover_value(cover: str | None, images: ImageBases) -> str | None:
    """What a book's ``cover`` serves: the URL of the stored image, from where ``images`` are served now,
    when blog-api stores the repository's images, else its repository path (``books/<slug>/cover.png``);
    null without a cover."""
    # Imported here: the accept path loads this module and not the articles package.
    from function.articles.images import compose_url

    return compose_url(cover, images)


def book_summary_json(view: BookView, images: ImageBases) -> dict[str, Any]:
    """A ``BookSummary``: the book without its chapter list."""
    return {
        "bookId": str(view.id),
        "slug": view.slug,
        "title": view.title,
        "summary": view.summary,
        "tags": list(view.tags),
        "cover": cover_value(view.cover, images),
        "chapterCount": view.chapter_count,
        "publishedAt": iso_utc(view.published_at),
        "createdAt": iso_utc(view.created_at),
        "updatedAt": iso_utc(view.updated_at),
    }


def book_json(view: BookView, images: ImageBases) -> dict[str, Any]:
    """A ``Book``: the summary and its chapters in reading order."""
    chapters = [{"slug": c.slug, "title": c.title, "position": c.position} for c in view.chapters]
    return {**book_summary_json(view, images), "chapters": chapters}


def chapter_json(view: ChapterView, images: ImageBases) -> dict[str, Any]:
    """A ``Chapter``: rendered as an article is (its images composed as an article's), with its book's
    summary."""
    return {
        "slug": view.slug,
        "title": view.title,
        "position": view.position,
        "content": view.content,
        "contentHtml": served_html(view.content_html, images),
        "toc": list(view.toc),
        "book": book_summary_json(view.book, images),
        "updatedAt": iso_utc(view.updated_at),
    }
