"""Which books of a listing changed since the last sync, without reading a file: the book folders,
their files' blobs against the stored ones, and the order the stored config gives the chapters."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from function.articles.book_paths import CONFIG_NAMES, COVER_NAMES, BookPath, book_path, book_slug_error
from function.articles.books import BookConfig, ChapterPlace, ParsedChapter, missing_chapters, place_chapters
from function.assets.syncing import ArticleImages
from function.errors import ArticleParseError
from function.sources.port import RepoFile
from function.store.book_records import StoredBook
from function.store.records import RememberedFailure


@dataclass(frozen=True)
class BookFailure:
    path: str
    message: str
    retryable: bool = False
    remembered: bool = False


@dataclass
class PlannedBook:
    """One book folder of the listing, on its way through the sync."""

    slug: str
    folder: str
    files: dict[str, RepoFile]  # by file name
    stored: StoredBook | None
    config_file: RepoFile | None = None
    rebuild: bool = False  # read every file again, changed or not
    config: BookConfig | None = None
    places: list[ChapterPlace] = field(default_factory=list)
    parsed: dict[str, ParsedChapter] = field(default_factory=dict)  # chapter slug -> read again
    # Chapter paths rendered with an image that changed since (read again, to point at its new key).
    stale: frozenset[str] = frozenset()
    images: dict[str, ArticleImages] = field(default_factory=dict)  # chapter path -> its images, read now

    @property
    def cover(self) -> RepoFile | None:
        return next((self.files[name] for name in COVER_NAMES if name in self.files), None)

    def chapter_files(self) -> dict[str, BookPath]:
        return {
            f"{self.folder}/{name}": BookPath(self.slug, name) for name in self.files if name.endswith(".md")
        }

    def fingerprint(self) -> str:
        """Changes when any file of the book does: what a config-and-files disagreement is remembered by."""
        digest = hashlib.sha1(usedforsecurity=False)
        for name in sorted(self.files):
            digest.update(f"{self.files[name].sha} {name}\n".encode())
        return digest.hexdigest()


def group_books(
    files: Sequence[RepoFile], index: Mapping[str, StoredBook]
) -> tuple[list[PlannedBook], list[BookFailure]]:
    """The listing's book folders; a folder whose name is no book slug, or without a config, fails."""
    folders: dict[str, dict[str, RepoFile]] = {}
    for file in files:
        found = book_path(file.path)
        if found is not None:
            folders.setdefault(found.book, {})[found.name] = file
    books, failures = [], []
    for slug, by_name in sorted(folders.items()):
        folder = f"books/{slug}"
        if (error := book_slug_error(slug)) is not None:
            failures.append(BookFailure(folder + "/", error))
            continue
        config = next((by_name[name] for name in CONFIG_NAMES if name in by_name), None)
        if config is None:
            failures.append(BookFailure(folder + "/", "no config.yaml in the book's folder"))
            continue
        books.append(PlannedBook(slug, folder, by_name, index.get(slug), config_file=config))
    return books, failures


def publishes(book: PlannedBook) -> bool:
    if book.config is not None:
        return book.config.publish
    return book.stored is not None and book.stored.publish


def still_broken(book: PlannedBook, failure: RememberedFailure) -> bool:
    """Whether the file a book failed at is still the same blob (or, for a disagreement between the
    config and the files, whether no file of the book changed)."""
    if failure.path.endswith("/"):
        return failure.blob_sha == book.fingerprint()
    name = failure.path.rsplit("/", 1)[-1]
    file = book.files.get(name)
    return file is not None and file.sha == failure.blob_sha


def config_changed(book: PlannedBook) -> bool:
    stored, config = book.stored, book.config_file
    return (
        book.rebuild
        or stored is None
        or config is None
        or (stored.config_path, stored.config_sha) != (config.path, config.sha)
    )


def book_changed(book: PlannedBook) -> bool:
    """Whether anything readers see of the book may have changed: its config, cover or chapter files."""
    stored = book.stored
    if stored is None or stored.archived or config_changed(book):
        return True
    cover = book.cover
    if (stored.cover, stored.cover_sha) != ((cover.path, cover.sha) if cover else (None, None)):
        return True
    try:
        places, _ = place_chapters(BookConfig.from_json(stored.config), book.chapter_files())
    except ArticleParseError:
        return True
    if len(places) != len(stored.chapters):
        return True
    return any(
        chapter_changed(book, place) or stored.chapters[place.slug].position != place.position
        for place in places
    )


def chapter_changed(book: PlannedBook, place: ChapterPlace) -> bool:
    stored = book.stored.chapters.get(place.slug) if book.stored else None
    file = book.files[place.path.rsplit("/", 1)[-1]]
    return (
        stored is None or (stored.path, stored.blob_sha) != (place.path, file.sha) or place.path in book.stale
    )


def rendered_by_another(book: PlannedBook, render_fingerprint: str | None) -> frozenset[str]:
    """The paths of the book's stored chapters rendered by another version of the renderer or with
    other settings than ``render_fingerprint`` (None: none are compared)."""
    if render_fingerprint is None or book.stored is None:
        return frozenset()
    chapters = book.stored.chapters.values()
    return frozenset(c.path for c in chapters if c.render_fingerprint != render_fingerprint)


def written_by_another(book: PlannedBook, render_fingerprint: str | None) -> bool:
    """Whether the stored book was written by another version or with other settings: it is written
    again (its chapters rendered by another are read again, ``rendered_by_another``)."""
    stored = book.stored
    return (
        render_fingerprint is not None
        and stored is not None
        and stored.render_fingerprint != render_fingerprint
    )


def file_of(book: PlannedBook, place: ChapterPlace) -> RepoFile:
    return book.files[place.path.rsplit("/", 1)[-1]]


def missing_in(books: Iterable[PlannedBook]) -> list[tuple[str, str]]:
    """(the file expected, why and the fix) for every chapter a book's config lists without its file, in
    each book's config (read now, or as stored): reported on every sync, as long as they are missing."""
    found: list[tuple[str, str]] = []
    for book in books:
        config = book.config
        if config is None and book.stored is not None:
            config = BookConfig.from_json(book.stored.config)
        if config is not None:
            found += missing_chapters(config, book.chapter_files(), book.folder)
    return found
