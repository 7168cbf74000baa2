"""Writing the books that were read: each in its own transaction, with the hash of what readers see of it;
the books whose folder is gone archived; and the failures remembered or forgotten."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from function.articles.books import book_hash
from function.store.book_records import BookWrite, ChapterWrite
from function.store.records import RememberedFailure
from function.worker.sync.book_plan import BookFailure, PlannedBook
from function.worker.sync.ports import BookStore


def book_write(book: PlannedBook, cover_url: str | None, render_fingerprint: str | None) -> BookWrite:
    """The write of a book that was read: its config, cover and chapters (those read again with their
    new content, the others as stored), and what it was rendered with."""
    assert book.config is not None and book.config_file is not None
    stored_chapters = book.stored.chapters if book.stored else {}
    hashes = []
    chapters = []
    for place in book.places:
        parsed = book.parsed.get(place.slug)
        content_hash = parsed.content_hash if parsed else stored_chapters[place.slug].content_hash
        hashes.append((place.slug, place.position, content_hash))
        chapters.append(ChapterWrite(place.slug, place.position, parsed))
    cover = book.cover
    cover_path = cover.path if cover else None
    return BookWrite(
        slug=book.slug,
        config_path=book.config_file.path,
        config_sha=book.config_file.sha,
        config=book.config,
        cover=cover_path,
        cover_sha=cover.sha if cover else None,
        # The URL readers get is part of what they see change (a cover stored later, a new key).
        content_hash=book_hash(book.config, cover_url or cover_path, hashes),
        chapters=tuple(chapters),
        cover_url=cover_url,
        render_fingerprint=render_fingerprint,
    )


class BookWriter:
    """One user's book writes on the store's books part."""

    def __init__(self, store: BookStore, render_fingerprint: str | None = None) -> None:
        self._store = store
        self._render_fingerprint = render_fingerprint

    def write(self, user_id: int, book: PlannedBook, now: datetime, cover_url: str | None) -> str | None:
        """Write ``book`` in its own transaction; what readers see change of it ("published",
        "updated", "unpublished") or None."""
        write = book_write(book, cover_url, self._render_fingerprint)
        return self._store.apply_book(user_id, write, book.stored, now)

    def archive(self, user_id: int, slugs: Sequence[str], now: datetime) -> list[str]:
        """Archive the books whose folder is gone; those readers saw until now."""
        return self._store.archive_books(user_id, slugs, now)

    def remember(
        self,
        user_id: int,
        remembered: Mapping[str, RememberedFailure],
        new: list[RememberedFailure],
        failures: list[BookFailure],
    ) -> None:
        """Remember the books that failed now; forget those that do not fail any more (read again, or
        back at the blobs stored before they broke), and those gone."""
        fresh = [failure for failure in new if remembered.get(failure.slug) != failure]
        failing = {failure.path.split("/")[1] for failure in failures}
        forget = [slug for slug in remembered if slug not in failing]
        if fresh or forget:
            self._store.remember_book_failures(user_id, fresh, forget)
