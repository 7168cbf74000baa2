"""A book too large for one transaction, written in parts (``book_parts``): on SQLite and MariaDB, and
through the TiDB-faithful relay with its transaction limit lowered, readers see the old book whole until
the last small transaction, then the new one whole."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.models import Book
from function.store.schema import create_tables
from tests.kit.tidb_proxy import TiDBRelay

from .test_books import LATER, NOW, chapter, write

SLUG = "my-first-book"
# Chapters of about 100 KB a row (50 KB of Markdown, as much HTML); a book of ten is 1 MB.
BODY = "x" * 50_000
# Below, the one-transaction bound is 300 KB and a part at most 250 KB: two chapters a part.
ONE_TRANSACTION, PART = 300_000, 250_000


def hidden_rows(store: PeeweeStore) -> list[str]:
    """The slugs of the rows that are versions of a book, not books."""
    return [book.slug for book in Book.select(Book.slug).where(Book.slug.startswith("~")).bind(store.db)]


def served_chapters(store: PeeweeStore, now: object = LATER) -> dict[str, str]:
    """What readers get of the book: each chapter's Markdown by slug (empty when not served)."""
    book = store.book_reads.published_book("alice", SLUG, now=LATER)
    if book is None:
        return {}
    chapters = {}
    for summary in book.chapters:
        view = store.book_reads.published_chapter("alice", SLUG, summary.slug, now=LATER)
        assert view is not None
        chapters[summary.slug] = view.content
    return chapters


def test_a_book_past_the_bound_is_written_in_parts_and_served_whole(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    first = [chapter(f"c{i}", BODY + str(i)) for i in range(10)]

    # WHEN a book of 1 MB is written with a bound of 300 KB
    seen = store.books.apply_book(
        user.id, write(first), None, NOW, max_bytes=ONE_TRANSACTION, part_bytes=PART
    )

    # THEN it is published whole, its chapters in order, and no hidden version is left
    assert seen == "published"
    assert served_chapters(store) == {f"c{i}": BODY + str(i) for i in range(10)}
    assert [c.position for c in store.book_reads.published_book("alice", SLUG, now=LATER).chapters] == list(  # type: ignore[union-attr]
        range(1, 11)
    )
    assert hidden_rows(store) == []


def test_a_rewrite_in_parts_keeps_the_books_times_and_the_unchanged_chapters(store: PeeweeStore) -> None:
    # GIVEN a book of ten chapters written at NOW
    user = store.users.add_user("alice", "a@example.com", 1)
    store.books.apply_book(user.id, write([chapter(f"c{i}", BODY + str(i)) for i in range(10)]), None, NOW)
    stored = store.books.load_book_index(user.id)[SLUG]
    before = store.book_reads.published_book("alice", SLUG, now=LATER)
    assert before is not None

    # WHEN at LATER, in parts, c0 and c1 change, c9 goes, and the others move up one place
    chapters = [chapter("c0", "New 0."), chapter("c1", "New 1.")] + [None] * 7
    slugs = [f"c{i}" for i in range(9)][::-1]
    edit = write(chapters[::-1], slugs=slugs)
    seen = store.books.apply_book(user.id, edit, stored, LATER, max_bytes=ONE_TRANSACTION, part_bytes=PART)

    # THEN readers get the new book: its chapters, places and times as a one-transaction write leaves them
    after = store.book_reads.published_book("alice", SLUG, now=LATER)
    assert seen == "updated" and after is not None
    assert [c.slug for c in after.chapters] == slugs
    assert served_chapters(store) == {
        **{f"c{i}": BODY + str(i) for i in range(2, 9)},
        "c0": "New 0.",
        "c1": "New 1.",
    }
    assert (after.created_at, after.published_at, after.updated_at) == (
        before.created_at,
        before.published_at,
        LATER,
    )
    index = store.books.load_book_index(user.id)[SLUG]
    assert sorted(index.chapters) == sorted(slugs)
    assert index.chapters["c5"].content_hash == stored.chapters["c5"].content_hash
    assert hidden_rows(store) == []
    # The book's row is the new version's: its id is a new one.
    assert after.id != before.id


@pytest.fixture
def tidb_store(tidb_url: str, tidb_relay: TiDBRelay) -> Iterator[PeeweeStore]:
    db = open_database(tidb_url)
    with connection(db):
        create_tables(db)
        # The relay installs a table's checks before the first statement that writes it, unless another
        # transaction holds the table then: a book's first write holds ``book_chapters`` through the
        # foreign key from the moment it writes ``books``. Installed up front here.
        tidb_relay.install_checks({(db.database, "books"), (db.database, "book_chapters")})
        yield PeeweeStore(db)
    db.close()


@pytest.mark.mysql
def test_through_the_relay_a_book_past_its_limit_is_written_in_parts_and_a_failed_part_shows_nothing(
    tidb_store: PeeweeStore, tidb_relay: TiDBRelay
) -> None:
    store = tidb_store
    user = store.users.add_user("alice", "a@example.com", 1)
    first = write([chapter(f"c{i}", BODY + str(i)) for i in range(10)])

    with tidb_relay.limits(txn=600_000):
        # GIVEN the relay refuses a transaction over 600 KB: the 1 MB book in one transaction fails (8004)
        with pytest.raises(Exception, match="Transaction is too large"):
            store.books.apply_book(user.id, first, None, NOW)
        assert served_chapters(store) == {}

        # WHEN it is written in parts of 250 KB THEN it is served whole
        store.books.apply_book(user.id, first, None, NOW, max_bytes=ONE_TRANSACTION, part_bytes=PART)
        assert served_chapters(store) == {f"c{i}": BODY + str(i) for i in range(10)}

        # WHEN a rewrite's last part fails (a chapter of 700 KB alone passes the relay's limit)
        stored = store.books.load_book_index(user.id)[SLUG]
        big = [chapter(f"c{i}", "Edited." if i < 9 else "y" * 350_000) for i in range(10)]
        with pytest.raises(Exception, match="Transaction is too large"):
            store.books.apply_book(
                user.id, write(big), stored, LATER, max_bytes=ONE_TRANSACTION, part_bytes=PART
            )

        # THEN readers still get the old book, whole, and the sync's index is the old one
        assert served_chapters(store) == {f"c{i}": BODY + str(i) for i in range(10)}
        assert store.books.load_book_index(user.id)[SLUG] == stored

        # WHEN the next write in parts passes THEN it is served whole and the hidden rows are gone
        fixed = [chapter(f"c{i}", "Edited." + BODY) for i in range(10)]
        store.books.apply_book(
            user.id, write(fixed), stored, LATER, max_bytes=ONE_TRANSACTION, part_bytes=PART
        )
        assert served_chapters(store) == {f"c{i}": "Edited." + BODY for i in range(10)}
        assert hidden_rows(store) == []
