"""The sync of a user's Zenn books, by the articles' rules: the listing's blob SHAs are compared with
what the database holds (``book_plan``), and only the files that changed are fetched and rendered
(``book_reading``: a push that edits one chapter reads one blob); each book is written in its own
transaction and a book whose folder is gone is archived, from a complete listing only
(``book_writing``); a book whose config is broken, or whose files disagree with it, fails alone, is left
as it was, and is remembered by the blob that broke it, so it is not read again until that file changes.
A book is served with the chapters it has: each chapter its config lists without a file is named on every
sync, with the file expected, and one that does not render is named when it is read. The covers and the
chapters' images go through the images' pass (``book_images``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from function.assets.syncing import AssetPass
from function.sources.port import ArticleSource, RepoRef, Snapshot
from function.store.book_records import BookChanges
from function.worker.sync.book_images import cover_url_changed, record_references, resolve_covers
from function.worker.sync.book_plan import (
    BookFailure,
    book_changed,
    group_books,
    missing_in,
    publishes,
    rendered_by_another,
    still_broken,
    written_by_another,
)
from function.worker.sync.book_reading import BookFailures, BookReader
from function.worker.sync.book_writing import BookWriter
from function.worker.sync.ports import BookStore
from function.worker.sync.summary import FileFailure, FileWarning, SyncSummary, log_failures


@dataclass
class BookSyncResult:
    books: int = 0  # book folders in the listing
    failed: int = 0
    fetched: int = 0  # files read
    written: int = 0  # books written
    archived: int = 0
    drafts: int = 0  # books in sync that are drafts (not served)
    failures: list[BookFailure] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    changes: BookChanges = field(default_factory=BookChanges)
    # Books served without some chapter their config lists (missing, or that does not render).
    incomplete: list[str] = field(default_factory=list)

    @property
    def succeeded(self) -> int:
        return self.books - self.failed

    def add_to(self, summary: SyncSummary) -> None:
        """Count the books in the sync's summary: each book folder is one file processed, and its
        failures and warnings are the summary's like an article's."""
        summary.processed += self.books
        summary.succeeded += self.succeeded
        summary.failed += self.failed
        summary.fetched += self.fetched
        summary.written += self.written
        summary.archived += self.archived
        summary.drafts += self.drafts
        summary.failures += [FileFailure(f.path, f.message, f.retryable, f.remembered) for f in self.failures]
        summary.warnings += [FileWarning(path, message) for path, message in self.warnings]
        summary.book_changes = self.changes
        summary.incomplete += self.incomplete
        summary.books, summary.book_drafts = summary.books + self.books, summary.book_drafts + self.drafts


Clock = Callable[[], datetime]


class BookSync:
    """Syncs one user's books from a source's snapshot into a store."""

    def __init__(
        self,
        store: BookStore,
        source: ArticleSource,
        *,
        clock: Clock,
        allow_raw_html: bool = False,
        asset_base_url: str | None = None,
        render_fingerprint: str | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._render_fingerprint = render_fingerprint
        self._reader = BookReader(source, allow_raw_html=allow_raw_html, asset_base_url=asset_base_url)
        self._writer = BookWriter(store, render_fingerprint)

    def run(
        self,
        user_id: int,
        repo: RepoRef,
        snapshot: Snapshot,
        *,
        rebuild: bool = False,
        assets: AssetPass | None = None,
    ) -> BookSyncResult:
        """Sync the books of ``snapshot``; ``rebuild``: read and render every book again; ``assets``: the
        images' pass, through which the covers are stored and served (None: a cover is its path)."""
        result = BookSyncResult()
        if not snapshot.complete:
            # A truncated listing may miss some of a book's files: its chapters would look deleted.
            return result
        index = self._store.load_book_index(user_id)
        if not snapshot.book_files and not index:
            return result  # a repository without books costs one SELECT
        remembered = self._store.load_book_failures(user_id)
        books, grouping = group_books(snapshot.book_files, index)
        failures = BookFailures(shown=grouping)
        result.books = len(books) + len(grouping)
        covers: dict[str, str | None] = {}
        images_changed: frozenset[str] = frozenset()
        if assets is not None:
            covers, result.warnings = resolve_covers(assets, repo, snapshot, books)
            if not rebuild:
                images_changed = frozenset(assets.stale_slugs(snapshot))  # chapter paths among the slugs
        fingerprint = self._render_fingerprint
        changed = []
        for book in books:
            # Chapters rendered with an image that changed since, or by another renderer: read again.
            book.stale = images_changed | rendered_by_another(book, fingerprint)
            known = None if rebuild else remembered.get(book.slug)
            if known is not None and still_broken(book, known):
                failures.shown.append(BookFailure(known.path, known.message, remembered=True))
            elif (
                rebuild
                or book_changed(book)
                or cover_url_changed(book, covers)
                or written_by_another(book, fingerprint)
            ):
                book.rebuild = rebuild
                changed.append(book)
        read = self._reader.read(repo, snapshot, changed, failures, assets=assets)
        result.fetched, result.warnings = read.fetched, result.warnings + read.warnings
        now = self._clock()
        for book in read.ready:
            seen = self._writer.write(user_id, book, now, covers.get(book.slug))
            result.written += 1
            if seen is not None:
                getattr(result.changes, seen).append(book.slug)
        listed = {book.slug for book in books} | {f.path.split("/")[1] for f in failures.shown}
        gone = [slug for slug, stored in index.items() if slug not in listed and not stored.archived]
        result.changes.unpublished += self._writer.archive(user_id, gone, now)
        result.archived = len(gone)
        self._writer.remember(user_id, remembered, failures.new, failures.shown)
        result.failures = failures.shown
        result.failed = len(failures.shown)
        failed = {f.path.split("/")[1] for f in failures.shown}
        result.drafts = sum(not publishes(book) for book in books if book.slug not in failed)
        missing = missing_in(book for book in books if book.slug not in failed)
        result.warnings += missing
        result.incomplete = sorted(read.incomplete | {path.split("/")[1] for path, _ in missing})
        log_failures([FileFailure(f.path, f.message, f.retryable, f.remembered) for f in failures.shown])
        if assets is not None:
            record_references(assets, books, {book.slug for book in read.ready}, index)
            assets.finish(now, complete=True)  # the covers' rows and references: none when unchanged
        return result
