"""Zenn books, the sync's side: the index of a user's books and chapters, writing one book in one
transaction (a large one in parts, ``book_parts``), archiving the books whose folder is gone, and
remembering the books that failed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from peewee import fn

from function.articles.row_size import stored_row_bytes, toc_json
from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.batching import (
    BOOK_TRANSACTION_MAX_BYTES,
    KEY_CHUNK_SIZE,
    TRANSACTION_MAX_BYTES,
    upsert_many,
)
from function.store.book_parts import BookInParts, chapter_copies, hidden_versions
from function.store.book_records import BookWrite, StoredBook, StoredChapter
from function.store.bounds import groups, limits_of
from function.store.models import Book, BookChapter, FailedBook
from function.store.records import RememberedFailure
from function.store.row_bytes import row_bytes_of
from function.store.write_plan import output_hash

_BOOK_COLUMNS = (
    Book.id,
    Book.slug,
    Book.config_path,
    Book.config_sha,
    Book.config,
    Book.cover,
    Book.cover_sha,
    Book.content_hash,
    Book.publish,
    Book.archived,
    Book.published_at,
    Book.cover_url,
    Book.render_fingerprint,
)
_CHAPTER_COLUMNS = (
    BookChapter.book,
    BookChapter.slug,
    BookChapter.path,
    BookChapter.blob_sha,
    BookChapter.position,
    BookChapter.content_hash,
    BookChapter.render_fingerprint,
    BookChapter.output_hash,
)
# A chapter read again whose content changed: every column but its creation time is the new one.
_CHAPTER_PRESERVE = (
    BookChapter.path,
    BookChapter.blob_sha,
    BookChapter.title,
    BookChapter.position,
    BookChapter.content,
    BookChapter.content_html,
    BookChapter.toc,
    BookChapter.content_hash,
    BookChapter.render_fingerprint,
    BookChapter.output_hash,
    BookChapter.updated_at,
)


def visible(book: StoredBook | None) -> bool:
    """Whether readers see ``book`` now (scheduling aside: a book has no publication date of its own)."""
    return book is not None and book.publish and not book.archived and book.published_at is not None


class BookQueries(StoreBase):
    def _key_groups(self, keys: Sequence[str]) -> list[list[str]]:
        """``keys`` in ``IN (...)`` lists that fit the backend's parameter limit (beside a few others)."""
        return list(groups(keys, max_items=min(limits_of(self._db).keys(reserved=4), KEY_CHUNK_SIZE)))

    @_translated
    def load_book_index(self, user_id: int) -> dict[str, StoredBook]:
        """Every book of the user (archived included) by slug, with its chapters: two SELECTs, no content."""
        books = self._rows(Book.select(*_BOOK_COLUMNS).where(Book.user == user_id, ~hidden_versions()))
        if not books:
            return {}
        chapters = (
            BookChapter.select(*_CHAPTER_COLUMNS).join(Book).where(Book.user == user_id, ~hidden_versions())
        )
        return _book_index(books, self._rows(chapters))

    @_translated
    def load_book_failures(self, user_id: int) -> dict[str, RememberedFailure]:
        """The user's books that failed, by book slug, with the file and blob they failed at."""
        query = FailedBook.select(FailedBook.slug, FailedBook.path, FailedBook.blob_sha, FailedBook.message)
        return {
            row[0]: RememberedFailure(*row) for row in self._rows(query.where(FailedBook.user == user_id))
        }

    @_translated
    def remember_book_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None:
        """Record (or replace) these book failures and forget the given books', in one transaction."""
        failed = {f.slug for f in failures}
        forget = sorted(set(forget_slugs) - failed)
        if not failures and not forget:
            return
        with self._db.atomic():
            for chunk in self._key_groups(forget):
                FailedBook.delete().where(FailedBook.user == user_id, FailedBook.slug.in_(list(chunk))).bind(
                    self._db
                ).execute()
            upsert_many(
                self._db,
                FailedBook,
                [
                    {
                        "user": user_id,
                        "slug": f.slug,
                        "path": f.path,
                        "blob_sha": f.blob_sha,
                        "message": f.message,
                    }
                    for f in failures
                ],
                conflict_target=[FailedBook.user, FailedBook.slug],
                preserve=(FailedBook.path, FailedBook.blob_sha, FailedBook.message),
            )

    @_translated
    def apply_book(
        self,
        user_id: int,
        write: BookWrite,
        stored: StoredBook | None,
        now: datetime,
        *,
        max_bytes: int = BOOK_TRANSACTION_MAX_BYTES,
        part_bytes: int = TRANSACTION_MAX_BYTES,
    ) -> str | None:
        """Write one book and its chapters in one transaction (``stored``: what the index said of it,
        read under the user's lock that is still held); past ``max_bytes`` of chapter rows, in parts of
        at most ``part_bytes`` that readers see only once all are written (``book_parts``). Returns what
        readers see change: "published", "updated", "unpublished" or None."""
        config = write.config
        published_at = stored.published_at if stored is not None else None
        if config.publish and published_at is None:
            published_at = now  # Zenn's config has no date: first seen published
        chapters = stored.chapters if stored else {}
        # A chapter rendered again (an upgrade, a new image key) whose HTML differs is an update too.
        rendered_anew = any(_output_changed(chapters.get(c.slug), c.parsed) for c in write.chapters)
        changed = (
            stored is None or stored.content_hash != write.content_hash or stored.archived or rendered_anew
        )
        row: dict[str, Any] = {
            "config_path": write.config_path,
            "config_sha": write.config_sha,
            "config": config.to_json(),
            "title": config.title,
            "summary": config.summary,
            "tags": json.dumps(list(config.tags), ensure_ascii=False),
            "cover": write.cover,
            "cover_sha": write.cover_sha,
            "cover_url": write.cover_url,
            "chapter_count": len(write.chapters),
            "content_hash": write.content_hash,
            "render_fingerprint": write.render_fingerprint,
            "publish": config.publish,
            "archived": False,
            "archived_at": None,
            "published_at": published_at,
        }
        if self._too_large_for_one_transaction(write, stored, max_bytes):
            inserts, copies = chapter_copies(
                write,
                chapters,
                lambda position, parsed: _chapter_row(0, position, parsed, write.render_fingerprint, now),
                now,
            )
            parts = BookInParts(self._db, user_id, write, part_bytes)
            parts.run(row, stored, inserts, copies, now, changed=changed)
            return _seen_change(stored, config.publish, changed)
        with self._db.atomic():
            if stored is None:
                book_id = (
                    Book.insert(user=user_id, slug=write.slug, created_at=now, updated_at=now, **row)
                    .bind(self._db)
                    .execute()
                )
            else:
                book_id = stored.id
                if changed:
                    row["updated_at"] = now
                Book.update(**row).where(Book.id == book_id).bind(self._db).execute()
            self._write_chapters(book_id, write, chapters, now)
        return _seen_change(stored, config.publish, changed)

    def _too_large_for_one_transaction(self, write: BookWrite, stored: StoredBook | None, most: int) -> bool:
        """Whether the book's write passes ``most`` bytes of rows: the chapters read again, and those
        only moved (TiDB rewrites a whole row to change its position), as the database measures them."""
        weight = sum(chapter_bytes(c.parsed) for c in write.chapters if c.parsed is not None)
        if weight > most:
            return True
        chapters = stored.chapters if stored is not None else {}
        moved = [
            c.slug
            for c in write.chapters
            if c.parsed is None and c.slug in chapters and chapters[c.slug].position != c.position
        ]
        if not moved or stored is None:
            return False
        size = row_bytes_of(self._db, BookChapter)
        for chunk in self._key_groups(moved):
            query = BookChapter.select(fn.SUM(size)).where(
                BookChapter.book == stored.id, BookChapter.slug.in_(chunk)
            )
            row = self._first(query)
            weight += int(row[0] or 0) if row is not None else 0
        return weight > most

    def _write_chapters(
        self, book_id: int, write: BookWrite, stored: Mapping[str, StoredChapter], now: datetime
    ) -> None:
        """Delete the chapters no longer in the book, write those read again, move the others."""
        keep = {chapter.slug for chapter in write.chapters}
        gone = [slug for slug in stored if slug not in keep]
        for chunk in self._key_groups(gone):
            BookChapter.delete().where(BookChapter.book == book_id, BookChapter.slug.in_(list(chunk))).bind(
                self._db
            ).execute()
        rows = []
        for chapter in write.chapters:
            old = stored.get(chapter.slug)
            parsed = chapter.parsed
            if parsed is not None and (old is None or old.content_hash != parsed.content_hash):
                rows.append(_chapter_row(book_id, chapter.position, parsed, write.render_fingerprint, now))
            elif parsed is not None and old is not None:
                # Same content at another blob (line endings) or path, or rendered again (an upgrade, an
                # image stored under a new key): the HTML is the new one; an edit only if it differs.
                toc = _toc_json(parsed)
                moved = {BookChapter.updated_at: now} if _output_changed(old, parsed) else {}
                BookChapter.update(
                    {
                        BookChapter.path: parsed.path,
                        BookChapter.blob_sha: parsed.blob_sha,
                        BookChapter.position: chapter.position,
                        BookChapter.content_html: parsed.content_html,
                        BookChapter.toc: toc,
                        BookChapter.render_fingerprint: write.render_fingerprint,
                        BookChapter.output_hash: output_hash(parsed.content_html, toc),
                        **moved,
                    }
                ).where(BookChapter.book == book_id, BookChapter.slug == chapter.slug).bind(
                    self._db
                ).execute()
            elif old is not None and old.position != chapter.position:
                BookChapter.update(position=chapter.position).where(
                    BookChapter.book == book_id, BookChapter.slug == chapter.slug
                ).bind(self._db).execute()
        # One INSERT per group of rows that fits the backend's statement limits (bytes included: a
        # chapter may be a MiB of Markdown and more of HTML).
        upsert_many(
            self._db,
            BookChapter,
            rows,
            conflict_target=[BookChapter.book, BookChapter.slug],
            preserve=_CHAPTER_PRESERVE,
        )

    @_translated
    def archive_books(self, user_id: int, slugs: Sequence[str], now: datetime) -> list[str]:
        """Hide (never delete) the user's books ``slugs``, whose folder is gone; returns those readers
        saw. Nothing to archive: no statement."""
        if not slugs:
            return []
        seen = []
        with self._db.atomic():
            for chunk in self._key_groups(sorted(slugs)):
                where = (Book.user == user_id) & Book.slug.in_(list(chunk)) & ~Book.archived
                query = Book.select(Book.slug).where(where & Book.publish & Book.published_at.is_null(False))
                # Locking: the rows read are the rows the UPDATE below hides (TiDB's plain SELECT
                # would read the transaction's snapshot, not what the UPDATE changes).
                seen += [row[0] for row in self._rows(self._locking(query))]
                Book.update(archived=True, archived_at=now).where(where).bind(self._db).execute()
        return seen


def _seen_change(stored: StoredBook | None, publish: bool, changed: bool) -> str | None:
    """What readers see change of a book written: "published", "unpublished", "updated" or None."""
    before, after = visible(stored), publish
    if after and not before:
        return "published"
    if before and not after:
        return "unpublished"
    return "updated" if after and changed else None


def chapter_bytes(parsed: Any) -> int:
    """About what a chapter's row weighs (``function.articles.row_size``)."""
    others = (parsed.title, parsed.path, parsed.slug, parsed.blob_sha)
    return stored_row_bytes(parsed.content, parsed.content_html, toc_json(parsed.toc), others)


def _chapter_row(
    book_id: int, position: int, parsed: Any, render_fingerprint: str | None, now: datetime
) -> dict[str, Any]:
    toc = _toc_json(parsed)
    return {
        "book": book_id,
        "slug": parsed.slug,
        "path": parsed.path,
        "blob_sha": parsed.blob_sha,
        "title": parsed.title,
        "position": position,
        "content": parsed.content,
        "content_html": parsed.content_html,
        "toc": toc,
        "content_hash": parsed.content_hash,
        "render_fingerprint": render_fingerprint,
        "output_hash": output_hash(parsed.content_html, toc),
        "created_at": now,
        "updated_at": now,
    }


def _toc_json(parsed: Any) -> str:
    return toc_json(parsed.toc)


def _output_changed(stored: StoredChapter | None, parsed: Any) -> bool:
    """Whether a chapter read again renders to other HTML than the stored one (not known: no)."""
    if stored is None or parsed is None or stored.output_hash is None:
        return False
    return stored.output_hash != output_hash(parsed.content_html, _toc_json(parsed))


def _book_index(
    books: Sequence[tuple[Any, ...]], chapter_rows: Sequence[tuple[Any, ...]]
) -> dict[str, StoredBook]:
    chapters: dict[int, dict[str, StoredChapter]] = {}
    for book_id, *rest in chapter_rows:
        chapter = StoredChapter(*rest)
        chapters.setdefault(book_id, {})[chapter.slug] = chapter
    return {row[1]: _stored_book(row, chapters.get(row[0], {})) for row in books}


def _stored_book(row: tuple[Any, ...], chapters: Mapping[str, StoredChapter]) -> StoredBook:
    book_id, slug, config_path, config_sha, config, cover, cover_sha, content_hash, publish, archived, at = (
        row[:11]
    )
    return StoredBook(
        book_id,
        slug,
        config_path,
        config_sha,
        config,
        cover,
        cover_sha,
        content_hash,
        publish,
        archived,
        at,
        chapters,
        cover_url=row[11],
        render_fingerprint=row[12],
    )
