"""The books' writes on SQLite and MariaDB: what readers see change, bounded INSERTs, archiving."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from function.articles.books import BookConfig, ParsedChapter
from function.store.book_records import BookWrite, ChapterWrite
from function.store.facade import PeeweeStore
from tests.kit.statements import count_statements

NOW = datetime(2026, 12, 1, 9, 0)
LATER = datetime(2026, 12, 2, 9, 0)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def chapter(slug: str, body: str = "Text.", title: str = "T") -> ParsedChapter:
    return ParsedChapter(
        slug=slug,
        path=f"books/my-first-book/{slug}.md",
        blob_sha=_sha(body)[:40],
        title=title,
        content=body,
        content_html=f"<p>{body}</p>",
        toc=(),
        content_hash=_sha(title + body),
    )


def write(
    chapters: Sequence[ParsedChapter | None], *, publish: bool = True, slugs: list[str] | None = None
) -> BookWrite:
    names = slugs or [c.slug for c in chapters if c is not None]
    config = BookConfig("Book", "", ("aws",), publish, None)
    return BookWrite(
        slug="my-first-book",
        config_path="books/my-first-book/config.yaml",
        config_sha="c" * 40,
        config=config,
        cover=None,
        cover_sha=None,
        content_hash=_sha(str([(c.slug, c.content_hash) if c else None for c in chapters]) + str(publish)),
        chapters=tuple(
            ChapterWrite(slug, n, c) for n, (slug, c) in enumerate(zip(names, chapters, strict=True), 1)
        ),
    )


def test_a_book_is_published_updated_and_unpublished(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)

    first = store.books.apply_book(user.id, write([chapter("a"), chapter("b")]), None, NOW)
    stored = store.books.load_book_index(user.id)["my-first-book"]
    edited = store.books.apply_book(
        user.id, write([chapter("a", "New."), None], slugs=["a", "b"]), stored, LATER
    )
    stored = store.books.load_book_index(user.id)["my-first-book"]
    hidden = store.books.apply_book(
        user.id, write([None, None], publish=False, slugs=["a", "b"]), stored, LATER
    )

    assert (first, edited, hidden) == ("published", "updated", "unpublished")
    assert store.book_reads.published_book("alice", "my-first-book", now=LATER) is None
    assert sorted(store.books.load_book_index(user.id)["my-first-book"].chapters) == ["a", "b"]


def test_big_chapters_are_written_in_bounded_inserts(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    big = [chapter(f"c{i}", "x" * 1_500_000) for i in range(4)]  # 3 MB a row with its HTML

    with count_statements(store.db) as seen:
        store.books.apply_book(user.id, write(big), None, NOW)

    inserts = [s for s in seen.matching("INSERT") if "book_chapters" in s]
    assert len(inserts) == 4
    book = store.book_reads.published_book("alice", "my-first-book", now=NOW)
    assert book is not None and [c.slug for c in book.chapters] == ["c0", "c1", "c2", "c3"]


def test_archiving_hides_a_book_and_names_it_once(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    store.books.apply_book(user.id, write([chapter("a")]), None, NOW)

    assert store.books.archive_books(user.id, ["my-first-book"], LATER) == ["my-first-book"]
    assert store.books.archive_books(user.id, ["my-first-book"], LATER) == []
    assert store.book_reads.published_book("alice", "my-first-book", now=LATER) is None
    assert store.books.load_book_index(user.id)["my-first-book"].archived
