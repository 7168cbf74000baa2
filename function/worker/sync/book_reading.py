"""Reading the books that changed: the configs that changed are fetched and parsed (the others are taken as
stored) and place each book's chapters; then the chapters whose file changed are fetched and rendered.
Two fetches at most per sync (which chapters a book has depends on its config). A book whose config is
broken fails alone, and is remembered by the blob that broke it (``BookFailures``); a chapter that does not
render is a warning naming its file: the book is written with the chapters it has (one served before is
kept as it was)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from function.articles.books import (
    BookConfig,
    ChapterPlace,
    ParsedChapter,
    parse_book_config,
    parse_chapter,
    place_chapters,
)
from function.assets.syncing import ArticleImages, AssetPass
from function.errors import ArticleParseError
from function.sources.port import ArticleSource, FetchFailure, FetchResult, RepoFile, RepoRef, Snapshot
from function.store.records import RememberedFailure
from function.worker.sync.book_plan import BookFailure, PlannedBook, chapter_changed, config_changed, file_of


@dataclass
class BookFailures:
    """The books that failed in one sync: every failure is reported (``shown``); one caused by the book's
    own files is also remembered (``new``), so the book is not read again until that file changes."""

    shown: list[BookFailure] = field(default_factory=list)
    new: list[RememberedFailure] = field(default_factory=list)

    def broke(self, book: PlannedBook, path: str, sha: str, message: str) -> None:
        self.shown.append(BookFailure(path, message))
        self.new.append(RememberedFailure(book.slug, path, sha, message))

    def unreadable(self, failure: FetchFailure) -> None:
        """A file the source could not give (not remembered: the next sync tries again)."""
        self.shown.append(BookFailure(failure.path, failure.message, failure.retryable))


@dataclass
class BooksRead:
    """What reading the changed books gave: the books ready to be written, the files fetched and the
    warnings (path, message)."""

    ready: list[PlannedBook] = field(default_factory=list)
    fetched: int = 0
    warnings: list[tuple[str, str]] = field(default_factory=list)
    # The books written without some chapter that is theirs (one that does not render): their slugs.
    incomplete: set[str] = field(default_factory=set)


class BookReader:
    """Fetches and parses the changed books' files with the blog's options."""

    def __init__(self, source: ArticleSource, *, allow_raw_html: bool, asset_base_url: str | None) -> None:
        self._source = source
        self._allow_raw_html = allow_raw_html
        self._asset_base_url = asset_base_url

    def read(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        books: list[PlannedBook],
        failures: BookFailures,
        *,
        assets: AssetPass | None,
    ) -> BooksRead:
        """Read ``books`` (each read again whole when its ``rebuild`` says so); those that fail are left
        out of ``ready`` and noted in ``failures``."""
        read = BooksRead()
        placed = self._read_configs(repo, snapshot, books, failures, read)
        read.ready = self._read_chapters(repo, snapshot, placed, failures, read, assets)
        return read

    def _read_configs(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        books: list[PlannedBook],
        failures: BookFailures,
        read: BooksRead,
    ) -> list[PlannedBook]:
        """Parse the changed configs (the others are taken as stored); the books whose chapters are
        placed."""
        changed = [book for book in books if config_changed(book)]
        contents = self._fetch(repo, snapshot, [b.config_file for b in changed if b.config_file], read)
        placed = []
        for book in books:
            config_file = book.config_file
            assert config_file is not None  # ``group_books`` keeps only books with a config
            try:
                if config_changed(book):
                    content = contents[config_file.path]
                    if isinstance(content, FetchFailure):
                        failures.unreadable(content)
                        continue
                    book.config = parse_book_config(content.content)
                else:
                    assert book.stored is not None
                    book.config = BookConfig.from_json(book.stored.config)
            except ArticleParseError as exc:
                failures.broke(book, config_file.path, config_file.sha, str(exc))
                continue
            read.warnings += [(config_file.path, w) for w in book.config.warnings]
            try:
                book.places, warnings = place_chapters(book.config, book.chapter_files())
            except ArticleParseError as exc:
                failures.broke(book, book.folder + "/", book.fingerprint(), str(exc))
                continue
            read.warnings += warnings
            placed.append(book)
        return placed

    def _read_chapters(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        books: list[PlannedBook],
        failures: BookFailures,
        read: BooksRead,
        assets: AssetPass | None,
    ) -> list[PlannedBook]:
        """Fetch and parse the chapters whose file changed; the books that are ready to be written."""
        wanted = {
            book.slug: [p for p in book.places if book.rebuild or chapter_changed(book, p)] for book in books
        }
        contents = self._fetch(repo, snapshot, [file_of(b, p) for b in books for p in wanted[b.slug]], read)
        ready = []
        for book in books:
            broken: list[ChapterPlace] = []
            for chapter in wanted[book.slug]:
                content = contents[chapter.path]
                if isinstance(content, FetchFailure):
                    failures.unreadable(content)
                    break
                images = assets.images_for(chapter.path) if assets is not None else None
                try:
                    book.parsed[chapter.slug] = self._parse(chapter, content.sha, content.content, images)
                except _ChapterError as exc:
                    broken.append(chapter)
                    read.warnings.append((exc.path, f"{exc.message}: {_left_out(book, chapter)}"))
                    continue
                if images is not None:
                    book.images[chapter.path] = images
            else:
                if broken:
                    _leave_out(book, broken)
                    read.incomplete.add(book.slug)
                ready.append(book)
        for book in ready:
            read.warnings += [(c.path, w) for c in book.parsed.values() for w in c.warnings]
            read.warnings += [(path, w) for path, images in book.images.items() for w in images.warnings]
        return ready

    def _parse(
        self, chapter: ChapterPlace, sha: str, content: bytes, images: ArticleImages | None
    ) -> ParsedChapter:
        try:
            return parse_chapter(
                chapter.path,
                chapter.slug,
                sha,
                content,
                allow_raw_html=self._allow_raw_html,
                asset_base_url=self._asset_base_url,
                resolve_image=images.resolve if images is not None else None,
            )
        except ArticleParseError as exc:
            raise _ChapterError(chapter.path, sha, str(exc)) from None

    def _fetch(
        self, repo: RepoRef, snapshot: Snapshot, files: list[RepoFile], read: BooksRead
    ) -> dict[str, FetchResult]:
        if not files:
            return {}
        read.fetched += len(files)
        return {r.path: r for r in self._source.fetch(repo, snapshot, files, wanted_in_all=len(files))}


def _left_out(book: PlannedBook, chapter: ChapterPlace) -> str:
    """What readers get of a chapter that does not render, and the fix."""
    stored = book.stored.chapters.get(chapter.slug) if book.stored else None
    if stored is not None and stored.path == chapter.path:
        return f"the book keeps serving the chapter as it was; fix {chapter.path} to update it"
    return f"the book is served without it; fix {chapter.path} to add it"


def _leave_out(book: PlannedBook, broken: list[ChapterPlace]) -> None:
    """The book as it is written with chapters that do not render: one served before stays as it was
    (the write takes the stored chapter), a new one is left out and the chapters after it move up."""
    stored = book.stored.chapters if book.stored else {}
    dropped = {c.slug for c in broken if c.slug not in stored or stored[c.slug].path != c.path}
    kept = [place for place in book.places if place.slug not in dropped]
    book.places = [replace(place, position=number) for number, place in enumerate(kept, 1)]


class _ChapterError(Exception):
    def __init__(self, path: str, sha: str, message: str) -> None:
        super().__init__(message)
        self.path, self.sha, self.message = path, sha, message
