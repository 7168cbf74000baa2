"""A push's database work in two turns: the opening one (lock, user, replay check, index, failures,
duplicate check, start record) and the closing one (finish record, lock released). The same records and
the same lock as the step-by-step calls, on both backends; one round trip each on MariaDB."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from function.articles.books import BookConfig, ParsedChapter
from function.errors import LockTimeout
from function.store.asset_records import AssetRecords, StoredAsset
from function.store.backends import MySQLDatabase, open_database
from function.store.book_records import BookWrite, ChapterWrite
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.job_turns import DeliveryStart
from function.store.records import RememberedFailure
from function.store.schema import create_tables
from tests.kit.builders import T0, apply_as_worker, article
from tests.kit.statements import count_statements

REPO = "octo/blog"


def start_of(delivery_id: str, *, installation_id: int = 1, now_s: int = 0) -> DeliveryStart:
    now = T0 + timedelta(seconds=now_s)
    return DeliveryStart(delivery_id, "push", installation_id, REPO, T0, lambda: now)


def finish(store: PeeweeStore, user_id: int, delivery_id: str, outcome: str = "success") -> None:
    store.finish_and_release(
        user_id,
        delivery_id,
        head_sha="a" * 40,
        processed=1,
        succeeded=1,
        failed=0,
        archived=0,
        outcome=outcome,
        error=None,
        now=T0 + timedelta(seconds=5),
    )


def is_mysql_store(store: PeeweeStore) -> bool:
    return isinstance(store.db, MySQLDatabase)


def test_a_new_delivery_is_started_and_sees_the_index_in_one_round_trip(store: PeeweeStore) -> None:
    user = store.add_user("alice", "a@example.com", 1, REPO)
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)
    store.remember_failures(user.id, [RememberedFailure("bad", "articles/bad.md", "f" * 40, "no title")], [])

    with count_statements(store.db) as seen, store.push_opened(5, start_of("d-1")) as opened:
        turns = seen.round_trips

    assert opened.user is not None and opened.user.id == user.id
    assert set(opened.index) == {"a", "b"}
    assert opened.failures["bad"].message == "no title"
    assert opened.previous is None and opened.last_sync is None
    assert opened.started
    record = store.get_delivery("d-1")
    assert record is not None and record.outcome == "processing" and record.attempts == 1
    if is_mysql_store(store):
        assert turns == 1, seen.statements


def test_finish_and_release_is_one_round_trip_and_frees_the_lock(store: PeeweeStore) -> None:
    user = store.add_user("alice", "a@example.com", 1, REPO)
    with store.push_opened(5, start_of("d-1")):
        with count_statements(store.db) as seen:
            finish(store, user.id, "d-1")
        assert not store.holds_server_locks()
    record = store.get_delivery("d-1")
    assert record is not None and record.outcome == "success" and record.finished_at is not None
    if is_mysql_store(store):
        assert seen.round_trips == 1, seen.statements
    # AND the lock is free for the next delivery at once
    with store.user_lock(user.id, 0):
        pass


def test_a_complete_delivery_is_left_exactly_as_it_was(store: PeeweeStore) -> None:
    user = store.add_user("alice", "a@example.com", 1, REPO)
    with store.push_opened(5, start_of("d-1")):
        finish(store, user.id, "d-1")
    before = store.get_delivery("d-1")

    with store.push_opened(5, start_of("d-1", now_s=60)) as opened:
        pass

    assert not opened.started
    assert opened.previous == before
    assert opened.last_sync == before  # the replay check sees the head it synced
    assert store.get_delivery("d-1") == before


def test_an_unfinished_delivery_sent_again_counts_one_more_attempt(store: PeeweeStore) -> None:
    store.add_user("alice", "a@example.com", 1, REPO)
    with store.push_opened(5, start_of("d-1")):
        pass  # the invocation died before finishing
    with store.push_opened(5, start_of("d-1", now_s=60)) as opened:
        pass
    record = store.get_delivery("d-1")
    assert opened.started
    assert opened.previous is not None and opened.previous.attempts == 1
    assert record is not None and record.attempts == 2 and record.outcome == "processing"
    assert T0 + timedelta(seconds=60) <= record.started_at < T0 + timedelta(seconds=61)


def test_an_unknown_installation_takes_no_lock_and_writes_nothing(store: PeeweeStore) -> None:
    store.add_user("alice", "a@example.com", 1, REPO)
    with store.push_opened(5, start_of("d-9", installation_id=9)) as opened:
        assert not store.holds_server_locks()
    assert opened.user is None and not opened.started
    assert store.get_delivery("d-9") is None


def test_a_delivery_that_cannot_take_the_lock_writes_nothing(db_url: str, store: PeeweeStore) -> None:
    user = store.add_user("alice", "a@example.com", 1, REPO)
    held, done = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        other = PeeweeStore(open_database(db_url))
        with connection(other.db), other.user_lock(user.id, 5):
            held.set()
            done.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert held.wait(10)
        with pytest.raises(LockTimeout), store.push_opened(0, start_of("d-1")):
            pass
    finally:
        done.set()
        holder.join()
    assert store.get_delivery("d-1") is None


@pytest.mark.mysql
def test_the_opening_turn_sent_twice_starts_the_delivery_once(mysql_url: str) -> None:
    # A kept connection found dead is replaced and the turn sent again: the start must not count twice.
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.add_user("alice", "a@example.com", 1, REPO)
        with store.push_opened(5, start_of("d-1")):
            pass
        for _ in range(2):  # the same turn (same start time) twice
            with store.push_opened(5, start_of("d-1", now_s=60)):
                pass
        record = store.get_delivery("d-1")
        assert record is not None and record.attempts == 2
        assert not store.holds_server_locks()
        with store.user_lock(user.id, 0):
            pass


def _book() -> BookWrite:
    chapter = ParsedChapter(
        "intro", "books/guide/intro.md", "b" * 40, "Intro", "Hi.", "<p>Hi.</p>", (), "h" * 64
    )
    return BookWrite(
        slug="guide",
        config_path="books/guide/config.yaml",
        config_sha="c" * 40,
        config=BookConfig("Guide", "", ("aws",), True, None),
        cover=None,
        cover_sha=None,
        content_hash="d" * 64,
        chapters=(ChapterWrite("intro", 1, chapter),),
    )


def test_the_opening_turn_reads_the_books_and_the_images_rows_in_the_same_round_trip(
    store: PeeweeStore,
) -> None:
    # GIVEN a user with a published book, a stored image an article points at, and a process that has
    # seen the images' tables (their first read makes them)
    user = store.add_user("alice", "a@example.com", 1, REPO)
    store.apply_book(user.id, _book(), None, T0)
    records = AssetRecords(store.db)
    records.load(user.id)
    image = StoredAsset("images/cat.png", "1" * 40, "a" * 64 + ".png", "a" * 64, 68, "image/png")
    records.save(user.id, [image], {"pets": {"images/cat.png": "1" * 40}}, now=T0)

    # WHEN a push opens with the images' read sent along
    with count_statements(store.db) as seen, store.push_opened(5, start_of("d-1"), also=records) as opened:
        turns = seen.round_trips

    # THEN on MariaDB one round trip answered both, exactly as their own reads do; SQLite reads them
    # on their own (nothing to save locally)
    if is_mysql_store(store):
        assert turns == 1, seen.statements
        assert opened.book_index == store.load_book_index(user.id)
        assert opened.book_index is not None and opened.book_index["guide"].chapters
        assert opened.also_rows is not None
        assert records.from_rows(opened.also_rows) == records.load(user.id)
        assert records.from_rows(opened.also_rows)[0] == {"images/cat.png": image}
    else:
        assert opened.book_index is None and opened.also_rows is None


@pytest.mark.mysql
def test_an_opening_turn_whose_images_tables_are_gone_is_sent_again_without_them(
    mysql_url: str,
) -> None:
    # GIVEN a process that saw the images' tables, which an operator then dropped
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.add_user("alice", "a@example.com", 1, REPO)
        records = AssetRecords(db)
        records.load(user.id)
        db.execute_sql("DROP TABLE asset_references")
        db.execute_sql("DROP TABLE assets")

        # WHEN a push opens with the images' read sent along
        with store.push_opened(5, start_of("d-1"), also=records) as opened:
            finish(store, user.id, "d-1")

        # THEN the turn went out again without it: the delivery ran, the images are read on their own
        # (which makes the tables again), and the lock was taken once: one release frees it
        assert opened.started and opened.also_rows is None
        assert records.opening_query(user.id) is None
        assert records.load(user.id) == ({}, {})
        assert not store.holds_server_locks()
        other = PeeweeStore(open_database(mysql_url))
        with connection(other.db), other.user_lock(user.id, 0):
            pass
