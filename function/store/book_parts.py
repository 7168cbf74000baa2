"""A book too large for one transaction, written in parts that readers never see half-done.

A book is written in one transaction when what it writes (its chapters' rows, whole, as TiDB counts
them) is at most ``BOOK_TRANSACTION_MAX_BYTES``. A larger one (hundreds of long chapters rendered again
after an upgrade, a first sync of a long book) would pass TiDB's ``txn-total-size-limit`` and fail on
every retry, so it is written in parts:

1. its new version is built under a hidden row of its own (a ``books`` row whose slug starts with
   ``~``, which no book slug can, archived and unpublished: no read ever lists it), in transactions of
   at most ``part_bytes`` of chapter rows. Chapters read again are written from what was read; the others
   are copied on the server from the stored version (``INSERT … SELECT``: their text never travels);
2. one small transaction flips it: the stored book's row is renamed out of the way (``~~`` and its slug)
   and hidden, and the new row takes the book's slug, its creation and publication times and what the
   config says. Readers see the old book, whole, until this commit, and the new one, whole, after it;
3. the old row and its chapters are deleted (deleting writes only TiDB's small deletion marks).

A sync cut short leaves hidden rows behind, never a half-written book: the next write of that book in
parts deletes them first. The book's row is a new one after a write in parts, so its id (``bookId``)
changes then; slugs, times and content are carried over.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import peewee

from function.articles.row_size import toc_json
from function.store.backends import is_mysql
from function.store.batching import KEY_CHUNK_SIZE, batched_transaction, upsert_chunks
from function.store.book_records import BookWrite, StoredBook, StoredChapter
from function.store.bounds import groups, limits_of
from function.store.models import Book, BookChapter
from function.store.row_bytes import row_bytes_of
from function.store.steps import is_store_error
from function.store.write_plan import output_hash

log = logging.getLogger(__name__)

NEW_VERSION_PREFIX = "~"  # the new version while it is built
OLD_VERSION_PREFIX = "~~"  # the replaced version until it is deleted


def hidden_versions() -> Any:
    """The condition that selects the hidden versions' rows."""
    return Book.slug.startswith(NEW_VERSION_PREFIX)


ChapterCopy = tuple[str, dict[str, Any]]  # (chapter slug, column -> value written over the stored row)


class BookInParts:
    """Writes one book in parts on ``db`` (the user's lock is held by the caller)."""

    def __init__(self, db: peewee.Database, user_id: int, write: BookWrite, part_bytes: int) -> None:
        self._db = db
        self._user = user_id
        self._write = write
        self._part_bytes = part_bytes

    def run(
        self,
        row: Mapping[str, Any],
        stored: StoredBook | None,
        inserts: Sequence[dict[str, Any]],
        copies: Sequence[ChapterCopy],
        now: datetime,
        *,
        changed: bool,
    ) -> None:
        """Build the new version (``row``: the book's columns; ``inserts``: rows of chapters new to the
        book; ``copies``: stored chapters written anew, some columns replaced; ``changed``: whether
        readers see it change, which moves its ``updated_at``), flip, clean up."""
        slug = self._write.slug
        self.delete_versions([NEW_VERSION_PREFIX + slug, OLD_VERSION_PREFIX + slug])
        hidden = {
            **row,
            "user": self._user,
            "slug": NEW_VERSION_PREFIX + slug,
            "publish": False,
            "archived": True,
            "archived_at": now,
            "created_at": now,
            "updated_at": now,
        }
        new_id = int(Book.insert(hidden).bind(self._db).execute())
        self._write_chapters(new_id, stored, inserts, copies)
        self._flip(new_id, row, stored, now, changed)
        try:
            self.delete_versions([OLD_VERSION_PREFIX + slug])
        except Exception as exc:
            if not is_store_error(exc):
                raise
            # The book is written and served; the old version's rows go with the next write in parts.
            log.warning("Old version of a book left to delete", extra={"book": slug, "error": str(exc)})

    def _write_chapters(
        self,
        new_id: int,
        stored: StoredBook | None,
        inserts: Sequence[dict[str, Any]],
        copies: Sequence[ChapterCopy],
    ) -> None:
        """The new version's chapters in transactions of at most ``part_bytes`` of rows: a copied
        chapter weighs what the database measures of its stored row plus what replaces part of it."""
        sizes = self._stored_sizes(stored.id, [s for s, _ in copies]) if stored is not None else {}
        work: list[tuple[str, Any]] = [("insert", {**row, "book": new_id}) for row in inserts]
        work += [("copy", copy) for copy in copies]

        def weight(item: tuple[str, Any]) -> int:
            kind, value = item
            if kind == "insert":
                return _values_bytes(value)
            chapter_slug, columns = value
            return sizes.get(chapter_slug, 0) + _values_bytes(columns)

        for part in groups(work, max_items=len(work), weights=[(weight, self._part_bytes)]):
            with batched_transaction(self._db) as tx:
                rows = [value for kind, value in part if kind == "insert"]
                for chunk in upsert_chunks(self._db, rows):
                    tx.add(BookChapter.insert_many(chunk).bind(self._db), "writing a book's chapters")
                for kind, value in part:
                    if kind == "copy":
                        assert stored is not None
                        tx.add(_copy_query(self._db, stored.id, new_id, *value), "copying a book's chapters")

    def _flip(
        self, new_id: int, row: Mapping[str, Any], stored: StoredBook | None, now: datetime, changed: bool
    ) -> None:
        """One small transaction: the stored row out of the way, the new one in its place, with the
        stored row's creation time (and its ``updated_at`` when readers see nothing change)."""
        slug = self._write.slug
        with self._db.atomic():
            created_at, updated_at = now, now
            if stored is not None:
                query = Book.select(Book.created_at, Book.updated_at).where(Book.id == stored.id)
                if is_mysql(self._db):
                    # The row read is the row renamed next (TiDB's plain SELECT reads the snapshot).
                    query = query.for_update()
                found = query.tuples().bind(self._db).first()
                if found is not None:
                    created_at, updated_at = found
                Book.update(
                    slug=OLD_VERSION_PREFIX + slug, publish=False, archived=True, archived_at=now
                ).where(Book.id == stored.id).bind(self._db).execute()
            final = {
                **row,
                "slug": slug,
                "created_at": created_at,
                "updated_at": now if changed else updated_at,
            }
            Book.update(final).where(Book.id == new_id).bind(self._db).execute()

    def delete_versions(self, slugs: Iterable[str]) -> None:
        """Delete the hidden versions named ``slugs``, their chapters first (a deletion writes only
        TiDB's small marks: one statement each)."""
        query = Book.select(Book.id).where(Book.user == self._user, Book.slug.in_(list(slugs)))
        ids = [row[0] for row in self._rows(query)]
        for book_id in ids:
            with self._db.atomic():
                BookChapter.delete().where(BookChapter.book == book_id).bind(self._db).execute()
                Book.delete().where(Book.id == book_id).bind(self._db).execute()

    def _stored_sizes(self, book_id: int, slugs: Sequence[str]) -> dict[str, int]:
        """The bytes of the stored chapters ``slugs`` (what copying each one writes)."""
        sizes: dict[str, int] = {}
        size = row_bytes_of(self._db, BookChapter)
        keys = min(limits_of(self._db).keys(reserved=2), KEY_CHUNK_SIZE)
        for chunk in groups(list(slugs), max_items=keys):
            query = BookChapter.select(BookChapter.slug, size).where(
                BookChapter.book == book_id, BookChapter.slug.in_(chunk)
            )
            sizes.update((slug, int(weight)) for slug, weight in self._rows(query))
        return sizes

    def _rows(self, query: Any) -> list[tuple[Any, ...]]:
        return list(query.tuples().bind(self._db))


def _copy_query(db: peewee.Database, from_id: int, to_id: int, slug: str, columns: Mapping[str, Any]) -> Any:
    """``INSERT … SELECT`` of the stored chapter ``slug`` under the new version, with ``columns``
    written over the stored values."""
    fields = [field for field in BookChapter._meta.sorted_fields if not field.primary_key]
    values = []
    for field in fields:
        if field.name == "book":
            values.append(peewee.Value(to_id))
        elif field.name in columns:
            values.append(peewee.Value(columns[field.name], converter=field.db_value))
        else:
            values.append(field)
    source = BookChapter.select(*values).where(BookChapter.book == from_id, BookChapter.slug == slug)
    return BookChapter.insert_from(source, fields).bind(db)


def _values_bytes(values: Mapping[str, Any]) -> int:
    """About what a row's given values weigh as TiDB stores them."""
    return sum(len(v.encode()) if isinstance(v, str) else 16 for v in values.values()) + 64


def chapter_copies(
    write: BookWrite,
    stored: Mapping[str, StoredChapter],
    row_of: Any,
    now: datetime,
) -> tuple[list[dict[str, Any]], list[ChapterCopy]]:
    """The new version's chapters: rows for those new to the book (``row_of(position, parsed)``), and,
    for those stored, the columns written over the stored row (as the one-transaction write would
    update them: content read again replaces it, the same content keeps its times)."""
    inserts: list[dict[str, Any]] = []
    copies: list[ChapterCopy] = []
    for chapter in write.chapters:
        old, parsed = stored.get(chapter.slug), chapter.parsed
        if old is None:
            if parsed is not None:
                inserts.append(row_of(chapter.position, parsed))
            continue
        columns: dict[str, Any] = {"position": chapter.position}
        if parsed is not None:
            toc = toc_json(parsed.toc)
            output = output_hash(parsed.content_html, toc)
            columns.update(
                path=parsed.path,
                blob_sha=parsed.blob_sha,
                render_fingerprint=write.render_fingerprint,
            )
            if old.content_hash != parsed.content_hash or old.output_hash not in (None, output):
                columns.update(
                    title=parsed.title,
                    content=parsed.content,
                    content_html=parsed.content_html,
                    toc=toc,
                    content_hash=parsed.content_hash,
                    output_hash=output,
                    updated_at=now,
                )
            elif old.output_hash is None:
                columns.update(content_html=parsed.content_html, toc=toc, output_hash=output)
        copies.append((chapter.slug, columns))
    return inserts, copies
