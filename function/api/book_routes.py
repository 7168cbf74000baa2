"""Read routes for Zenn books: published books, one book with its chapters, one chapter.

They answer as the article routes do (validators, 304, gzip, CORS, errors): the same request hooks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Blueprint, g, request

from function.api import read_routes
from function.api.book_json import book_json, book_summary_json, chapter_json
from function.api.serialise import image_bases
from function.errors import NotFound
from function.web import services

blueprint = Blueprint("books", __name__)
blueprint.before_request(read_routes._preflight)
blueprint.after_request(read_routes._finish)

_READ_METHODS = ["GET", "OPTIONS"]
# Filters a books cursor is signed with: never equal to an articles cursor's, so neither list accepts
# the other's cursor.
_FILTERS = ("books",)


def _changed(*times: datetime | None) -> datetime | None:
    present = [t for t in times if t is not None]
    return max(present) if present else None


@blueprint.route("/users/<name>/books", methods=_READ_METHODS)
def list_books(name: str) -> tuple[dict[str, Any], int]:
    limit = read_routes._limit()
    codec = read_routes._cursor_codec()
    cursor = request.args.get("cursor") or None
    after = codec.decode(cursor, user=name, filters=_FILTERS) if cursor else None
    with services().store() as store:
        page = store.book_reads.published_books_page(name, limit=limit, after=after)
    if page is None:
        raise NotFound(f"no user named {name!r}")
    g.last_modified = _changed(*(max(b.updated_at, b.published_at) for b in page.books))
    next_cursor = codec.encode(page.next_key, user=name, filters=_FILTERS) if page.next_key else None
    images = image_bases(services().settings)
    return {"books": [book_summary_json(b, images) for b in page.books], "nextCursor": next_cursor}, 200


@blueprint.route("/users/<name>/books/<slug>", methods=_READ_METHODS)
def get_book(name: str, slug: str) -> tuple[dict[str, Any], int]:
    with services().store() as store:
        book = store.book_reads.published_book(name, slug)
    if book is None:
        raise NotFound(f"no published book {slug!r} for {name!r}")
    g.last_modified = _changed(book.updated_at, book.published_at)
    return book_json(book, image_bases(services().settings)), 200


@blueprint.route("/users/<name>/books/<slug>/chapters/<chapter>", methods=_READ_METHODS)
def get_chapter(name: str, slug: str, chapter: str) -> tuple[dict[str, Any], int]:
    with services().store() as store:
        found = store.book_reads.published_chapter(name, slug, chapter)
    if found is None:
        raise NotFound(f"no chapter {chapter!r} in a published book {slug!r} of {name!r}")
    g.last_modified = _changed(found.updated_at, found.book.updated_at, found.book.published_at)
    return chapter_json(found, image_bases(services().settings)), 200
