"""The images of the books, when blog-api stores them (``function.assets``): each book's cover resolved to
its stored reference in the asset store (stored now when its blob is new; a URL only when served), and the
references that keep the sweep from deleting a cover or a chapter's image a book still shows."""

from __future__ import annotations

from collections.abc import Mapping

from function.assets.syncing import AssetPass
from function.sources.port import RepoRef, Snapshot
from function.store.book_records import StoredBook
from function.worker.sync.book_plan import PlannedBook


def resolve_covers(
    assets: AssetPass, repo: RepoRef, snapshot: Snapshot, books: list[PlannedBook]
) -> tuple[dict[str, str | None], list[tuple[str, str]]]:
    """Each listed book's cover as stored in the asset store (``asset:<key>``; None: not stored, its
    path is served), the cover stored now when its blob is new; and the covers' warnings (path, message)."""
    assets.prepare(repo, snapshot)  # nothing when the articles' part prepared this listing
    urls: dict[str, str | None] = {}
    warnings: list[tuple[str, str]] = []
    for book in books:
        assert book.config_file is not None
        cover, stored = book.cover, book.stored
        if cover is None:
            urls[book.slug] = None
            continue
        images = assets.images_for(book.config_file.path)
        urls[book.slug] = images.resolve("/" + cover.path)
        if stored is None or stored.archived or stored.cover_sha != cover.sha:
            warnings += [(cover.path, w) for w in images.warnings]  # once, not every push
    return urls, warnings


def cover_url_changed(book: PlannedBook, covers: Mapping[str, str | None]) -> bool:
    """Whether the cover's reference differs from the stored one (stored only now, or images no longer
    stored by blog-api): the book is written again, reading no file."""
    return book.stored is not None and book.stored.cover_url != covers.get(book.slug)


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
