"""The data of migration step 4: image URLs that earlier versions wrote into the stored HTML and the books'
covers, turned into the stored references the renderer writes now (``asset:<key>``, made a URL when an
answer is served: ``function.articles.images``).

An earlier version wrote ``<its ASSET_URL>/<key>``, whatever ``ASSET_URL`` was at that sync. A URL is
turned into a reference only when it ends in the key of an image blog-api stored (a row of ``assets``):
the same bytes, served from wherever ``ASSET_URL`` says now. Rows are read in rounds by id and written
only where something changed, in statements of bounded size, each committed on its own on MySQL/TiDB; a
step stopped half-way runs again from the start and finds nothing left to change in the rows it did. An
article's or chapter's ``output_hash`` (the hash of its HTML) follows its HTML, and a book's
``content_hash`` its cover, so the next sync sees nothing new for readers.

Images left to ``ARTICLE_ASSET_BASE_URL`` are not touched: which base an earlier version put before
them is not known here, and those rows were stored with another render fingerprint, so their blog's
next sync renders them again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

import peewee

from function.articles.books import BookConfig, book_hash
from function.articles.images import reference_for_url, references_for_urls
from function.store.bounds import STATEMENT_MAX_BYTES
from function.store.migrations.legacy import ArticleBefore7, has_bodies_in_rows
from function.store.models import Asset, Book, BookChapter
from function.store.write_plan import output_hash

# Rows read per round: their HTML is held in memory meanwhile.
READ_PER_ROUND = 200


def image_urls_to_references(
    db: peewee.Database, *, per_round: int = READ_PER_ROUND, statement_bytes: int = STATEMENT_MAX_BYTES
) -> None:
    """Articles' and chapters' HTML, and books' covers: asset URLs to stored references (``per_round``
    rows read at a time, at most ``statement_bytes`` of HTML written by one statement)."""
    keys = _stored_keys(db)
    if not keys:
        return  # no image was ever stored: no URL of one can be in the HTML
    # Step 6 ran on articles as they were before step 7: their HTML still in the row.
    for model in (ArticleBefore7, BookChapter):
        if has_bodies_in_rows(db, model):
            _rewrite_html(db, model, keys, per_round, statement_bytes)
    _rewrite_covers(db, keys)


def _stored_keys(db: peewee.Database) -> frozenset[str]:
    query = Asset.select(Asset.key).where(Asset.key.is_null(False)).distinct()
    # Peewee's tuples() yields tuples; its types say models.
    return frozenset(key for (key,) in cast(list[tuple[str]], list(query.tuples().bind(db))))


def _rewrite_html(
    db: peewee.Database,
    model: type[ArticleBefore7] | type[BookChapter],
    keys: frozenset[str],
    per_round: int,
    statement_bytes: int,
) -> None:
    last = 0
    while True:
        query = (
            model.select(model.id, model.content_html, model.toc, model.output_hash)
            .where(model.id > last, model.content_html.contains("<img"))
            .order_by(model.id)
            .limit(per_round)
        )
        # Peewee's tuples() yields tuples; its types say models.
        rows = cast(list[tuple[int, str, str | None, str | None]], list(query.tuples().bind(db)))
        if not rows:
            return
        last = rows[-1][0]
        changed = []
        for row_id, html, toc, hashed in rows:
            new = references_for_urls(html, keys)
            if new != html:
                # A hash of HTML that was not hashed (NULL) stays NULL: step 3 left it so on purpose.
                changed.append((row_id, new, output_hash(new, toc or "[]") if hashed is not None else None))
        for group in _bounded(changed, statement_bytes):
            ids = [row_id for row_id, _, _ in group]
            values: dict[peewee.Field, peewee.Case] = {
                model.content_html: peewee.Case(model.id, [(i, html) for i, html, _ in group])
            }
            hashes = [(i, hashed) for i, _, hashed in group if hashed is not None]
            if hashes:
                values[model.output_hash] = peewee.Case(model.id, hashes, model.output_hash)
            model.update(values).where(model.id.in_(ids)).bind(db).execute()


def _bounded(
    rows: Sequence[tuple[int, str, str | None]], statement_bytes: int
) -> Iterator[Sequence[tuple[int, str, str | None]]]:
    """``rows`` in groups whose HTML stays within ``statement_bytes`` (a larger row goes alone)."""
    group: list[tuple[int, str, str | None]] = []
    size = 0
    for row in rows:
        length = len(row[1].encode())
        if group and size + length > statement_bytes:
            yield group
            group, size = [], 0
        group.append(row)
        size += length
    if group:
        yield group


def _rewrite_covers(db: peewee.Database, keys: frozenset[str]) -> None:
    """Each book's ``cover_url`` that is an asset URL, and its ``content_hash`` where it is the hash an
    earlier version made with that URL (recomputed with the reference, so the book is not "updated")."""
    query = (
        Book.select(Book.id, Book.cover_url, Book.config, Book.content_hash)
        .where(Book.cover_url.is_null(False), ~Book.cover_url.startswith("asset:"))
        .order_by(Book.id)
    )
    books = cast(list[tuple[int, str, str, str]], list(query.tuples().bind(db)))
    for book_id, url, config_json, content_hash in books:
        reference = reference_for_url(url, keys)
        if reference is None:
            continue
        values: dict[peewee.Field, str] = {Book.cover_url: reference}
        config = BookConfig.from_json(config_json)
        chapters = _chapter_hashes(db, book_id)
        if book_hash(config, url, chapters) == content_hash:
            values[Book.content_hash] = book_hash(config, reference, chapters)
        Book.update(values).where(Book.id == book_id).bind(db).execute()


def _chapter_hashes(db: peewee.Database, book_id: int) -> list[tuple[str, int, str]]:
    query = (
        BookChapter.select(BookChapter.slug, BookChapter.position, BookChapter.content_hash)
        .where(BookChapter.book == book_id)
        .order_by(BookChapter.position)
    )
    return cast(list[tuple[str, int, str]], list(query.tuples().bind(db)))
