"""The sync of a user's Zenn books, by the articles' rules: the listing's blob SHAs are compared with
what the database holds, and only the files that changed are fetched (a push that edits one chapter
reads one blob); a book whose folder is gone is archived (from a complete listing only); each book is
written in its own transaction; a book that fails (its config, a chapter, or the two disagreeing) fails
alone, is left as it was, and is remembered by the blob that broke it, so it is not read again until
that file changes.

Two fetches at most per sync: the configs that changed, then the chapters to read (which chapters a
book has depends on its config).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from function.articles.books import (
    BookConfig,
    ChapterPlace,
    ParsedChapter,
    book_hash,
    missing_chapters,
    parse_book_config,
    parse_chapter,
    place_chapters,
)
from function.assets.syncing import ArticleImages, AssetPass
from function.errors import ArticleParseError
from function.sources.port import ArticleSource, FetchFailure, FetchResult, RepoFile, RepoRef, Snapshot
from function.store.book_records import BookChanges, BookWrite, ChapterWrite, StoredBook
from function.store.records import RememberedFailure
from function.worker.sync.book_plan import (
    BookFailure,
    PlannedBook,
    book_changed,
    chapter_changed,
    config_changed,
    file_of,
    group_books,
    publishes,
    still_broken,
)
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
    ) -> None:
        self._store = store
        self._source = source
        self._clock = clock
        self._allow_raw_html = allow_raw_html
        self._asset_base_url = asset_base_url

    def run(
        self,
        user_id: int,
        repo: RepoRef,
        snapshot: Snapshot,
        *,
        rebuild: bool = False,
        assets: AssetPass | None = None,
        index: Mapping[str, StoredBook] | None = None,
    ) -> BookSyncResult:
        """Sync the books of ``snapshot``; ``rebuild``: read and render every book again; ``assets``: the
        images' pass, through which the covers are stored and served (None: a cover is its path);
        ``index``: the user's books as read under the lock already (None: read now)."""
        result = BookSyncResult()
        if not snapshot.complete:
            # A truncated listing may miss some of a book's files: its chapters would look deleted.
            return result
        if index is None:
            index = self._store.load_book_index(user_id)
        if not snapshot.book_files and not index:
            return result  # a repository without books costs one SELECT
        remembered = self._store.load_book_failures(user_id)
        books, failures = group_books(snapshot.book_files, index)
        result.books = len(books) + len(failures)
        covers = resolve_covers(assets, repo, snapshot, books, result) if assets else {}
        if assets is not None and not rebuild:
            stale = frozenset(assets.stale_slugs(snapshot))  # chapter paths among the article slugs
            for book in books:
                book.stale = stale
        new_failures: list[RememberedFailure] = []
        changed: list[PlannedBook] = []
        for book in books:
            known = None if rebuild else remembered.get(book.slug)
            if known is not None and still_broken(book, known):
                failures.append(BookFailure(known.path, known.message, remembered=True))
            elif rebuild or book_changed(book) or _cover_url_changed(book, covers):
                book.rebuild = rebuild
                changed.append(book)
        self._read_configs(repo, snapshot, changed, failures, new_failures, result)
        ready = self._read_chapters(repo, snapshot, changed, failures, new_failures, rebuild, result, assets)
        now = self._clock()
        for book in ready:
            self._write(user_id, book, now, result, covers.get(book.slug))
        listed = {book.slug for book in books} | {f.path.split("/")[1] for f in failures}
        gone = [slug for slug, stored in index.items() if slug not in listed and not stored.archived]
        result.changes.unpublished += self._store.archive_books(user_id, gone, now)
        result.archived = len(gone)
        self._remember(user_id, remembered, new_failures, failures, listed)
        result.failures = failures
        result.failed = len(failures)
        failed = {f.path.split("/")[1] for f in failures}
        result.drafts = sum(not publishes(book) for book in books if book.slug not in failed)
        log_failures([FileFailure(f.path, f.message, f.retryable, f.remembered) for f in failures])
        if assets is not None:
            record_references(assets, books, {book.slug for book in ready}, index)
            assets.finish(now, complete=True)  # the covers' rows and references: none when unchanged
        return result

    def _read_configs(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        books: list[PlannedBook],
        failures: list[BookFailure],
        new_failures: list[RememberedFailure],
        result: BookSyncResult,
    ) -> None:
        """Parse the changed configs (the others are taken as stored) and place each book's chapters."""
        wanted = [b.config_file for b in books if b.config_file is not None and config_changed(b)]
        contents = self._fetch(repo, snapshot, [f for f in wanted if f is not None], result)
        for book in list(books):
            assert book.config_file is not None
            try:
                if config_changed(book):
                    content = contents[book.config_file.path]
                    if isinstance(content, FetchFailure):
                        failures.append(BookFailure(content.path, content.message, content.retryable))
                        books.remove(book)
                        continue
                    book.config = parse_book_config(content.content)
                else:
                    assert book.stored is not None
                    book.config = BookConfig.from_json(book.stored.config)
            except ArticleParseError as exc:
                self._fail(
                    book, book.config_file.path, book.config_file.sha, str(exc), failures, new_failures
                )
                books.remove(book)
                continue
            result.warnings += [(book.config_file.path, w) for w in book.config.warnings]
            try:
                book.places, warnings = place_chapters(book.config, book.chapter_files())
            except ArticleParseError as exc:
                self._fail(book, book.folder + "/", book.fingerprint(), str(exc), failures, new_failures)
                books.remove(book)
                continue
            result.warnings += warnings
            # Served with the chapters it has: each one missing is named, with the file expected.
            result.warnings += missing_chapters(book.config, book.chapter_files(), book.folder)

    def _read_chapters(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        books: list[PlannedBook],
        failures: list[BookFailure],
        new_failures: list[RememberedFailure],
        rebuild: bool,
        result: BookSyncResult,
        assets: AssetPass | None,
    ) -> list[PlannedBook]:
        """Fetch and parse the chapters whose file changed; the books that are ready to be written."""
        wanted = {
            book.slug: [p for p in book.places if rebuild or chapter_changed(book, p)] for book in books
        }
        files = [file_of(book, place) for book in books for place in wanted[book.slug]]
        contents = self._fetch(repo, snapshot, files, result)
        ready = []
        for book in books:
            try:
                for place in wanted[book.slug]:
                    content = contents[place.path]
                    if isinstance(content, FetchFailure):
                        failures.append(BookFailure(content.path, content.message, content.retryable))
                        break
                    images = assets.images_for(place.path) if assets is not None else None
                    book.parsed[place.slug] = self._parse(place, content.sha, content.content, images)
                    if images is not None:
                        book.images[place.path] = images
                else:
                    ready.append(book)
            except _ChapterError as exc:
                self._fail(book, exc.path, exc.sha, exc.message, failures, new_failures)
        for book in ready:
            result.warnings += [(c.path, w) for c in book.parsed.values() for w in c.warnings]
            result.warnings += [(path, w) for path, images in book.images.items() for w in images.warnings]
        return ready

    def _parse(
        self, place: ChapterPlace, sha: str, content: bytes, images: ArticleImages | None
    ) -> ParsedChapter:
        try:
            return parse_chapter(
                place.path,
                place.slug,
                sha,
                content,
                allow_raw_html=self._allow_raw_html,
                asset_base_url=self._asset_base_url,
                resolve_image=images.resolve if images is not None else None,
            )
        except ArticleParseError as exc:
            raise _ChapterError(place.path, sha, str(exc)) from None

    def _fetch(
        self, repo: RepoRef, snapshot: Snapshot, files: list[RepoFile], result: BookSyncResult
    ) -> dict[str, FetchResult]:
        if not files:
            return {}
        result.fetched += len(files)
        return {r.path: r for r in self._source.fetch(repo, snapshot, files, wanted_in_all=len(files))}

    def _write(
        self, user_id: int, book: PlannedBook, now: datetime, result: BookSyncResult, cover_url: str | None
    ) -> None:
        assert book.config is not None and book.config_file is not None
        stored_chapters = book.stored.chapters if book.stored else {}
        hashes = []
        chapters = []
        for place in book.places:
            parsed = book.parsed.get(place.slug)
            hashes.append(
                (
                    place.slug,
                    place.position,
                    parsed.content_hash if parsed else stored_chapters[place.slug].content_hash,
                )
            )
            chapters.append(ChapterWrite(place.slug, place.position, parsed))
        cover = book.cover
        cover_path = cover.path if cover else None
        write = BookWrite(
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
        )
        seen = self._store.apply_book(user_id, write, book.stored, now)
        result.written += 1
        if seen is not None:
            getattr(result.changes, seen).append(book.slug)

    def _fail(
        self,
        book: PlannedBook,
        path: str,
        sha: str,
        message: str,
        failures: list[BookFailure],
        new_failures: list[RememberedFailure],
    ) -> None:
        failures.append(BookFailure(path, message))
        new_failures.append(RememberedFailure(book.slug, path, sha, message))

    def _remember(
        self,
        user_id: int,
        remembered: Mapping[str, RememberedFailure],
        new: list[RememberedFailure],
        failures: list[BookFailure],
        listed: set[str],
    ) -> None:
        """Remember the books that failed now; forget those that do not fail any more (read again, or
        back at the blobs stored before they broke), and those gone."""
        fresh = [failure for failure in new if remembered.get(failure.slug) != failure]
        failing = {failure.path.split("/")[1] for failure in failures}
        forget = [slug for slug in remembered if slug not in failing]
        if fresh or forget:
            self._store.remember_book_failures(user_id, fresh, forget)


def resolve_covers(
    assets: AssetPass, repo: RepoRef, snapshot: Snapshot, books: list[PlannedBook], result: BookSyncResult
) -> dict[str, str | None]:
    """Each listed book's cover URL in the asset store (None: not stored, its path is served), the
    cover stored now when its blob is new."""
    assets.prepare(repo, snapshot)  # nothing when the articles' part prepared this listing
    urls: dict[str, str | None] = {}
    for book in books:
        assert book.config_file is not None
        cover, stored = book.cover, book.stored
        if cover is None:
            urls[book.slug] = None
            continue
        images = assets.images_for(book.config_file.path)
        urls[book.slug] = images.resolve("/" + cover.path)
        if stored is None or stored.archived or stored.cover_sha != cover.sha:
            result.warnings += [(cover.path, w) for w in images.warnings]  # once, not every push
    return urls


def record_references(
    assets: AssetPass,
    books: list[PlannedBook],
    written: set[str],
    index: Mapping[str, StoredBook],
) -> None:
    """Keep each book's reference to the cover readers see, under its config path, so the sweep never
    deletes a cover a book still shows: the listed one for a book written now, the stored one for a
    book left as it was (it failed); none for a book whose folder is gone. The same for its chapters'
    images, under each chapter's path (recorded only once the book is written)."""
    listed = set()
    for book in books:
        assert book.config_file is not None
        listed.add(book.slug)
        if book.slug in written:
            shown = book.cover.path if book.cover else None
        else:
            shown = book.stored.cover if book.stored and not book.stored.archived else None
        images = assets.images_for(book.config_file.path)
        if shown is not None:
            images.resolve("/" + shown)
        assets.record(book.config_file.path, images)
        if book.slug in written:
            _record_chapters(assets, book)
    for slug, stored in index.items():
        if slug not in listed:
            for path in [stored.config_path, *(c.path for c in stored.chapters.values())]:
                assets.record(path, assets.images_for(path))


def _record_chapters(assets: AssetPass, book: PlannedBook) -> None:
    """A written book's chapters: those read now point at what they were rendered with; a chapter gone
    from the book (or moved to another file) drops its references."""
    for path, images in book.images.items():
        assets.record(path, images)
    kept = {place.path for place in book.places}
    for chapter in book.stored.chapters.values() if book.stored else ():
        if chapter.path not in kept:
            assets.record(chapter.path, assets.images_for(chapter.path))


def _cover_url_changed(book: PlannedBook, covers: Mapping[str, str | None]) -> bool:
    """Whether the cover's URL differs from the stored one (stored only now, or images no longer
    stored by blog-api): the book is written again, reading no file."""
    return book.stored is not None and book.stored.cover_url != covers.get(book.slug)


class _ChapterError(Exception):
    def __init__(self, path: str, sha: str, message: str) -> None:
        super().__init__(message)
        self.path, self.sha, self.message = path, sha, message
