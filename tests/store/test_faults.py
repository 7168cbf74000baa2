"""Database faults: unreachable at start, connection dropped mid-transaction, a failing statement.
Whatever happens, the reconcile leaves nothing partial and the error says whether to retry."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import peewee
import pytest

from function.errors import DatabaseUnavailable
from function.store.backends import is_mysql, open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.records import StoredArticle
from function.store.schema import create_tables
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.mariadb import server_from_url

V1 = [article("a", tags=("x",)), article("b", tags=("y",))]
V2 = [article("a", body="edited", tags=("x", "new/tag")), article("c", tags=("z",))]


@pytest.fixture
def seeded(db_url: str) -> Iterator[tuple[peewee.Database, int]]:
    """A database holding V1 for user alice (head "h1"), not connected."""
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.users.add_user("alice", "a@example.com", 1)
        apply_as_worker(store, user.id, V1, [], T0)
    yield db, user.id


def snapshot(db: peewee.Database, user_id: int) -> tuple[dict[str, StoredArticle], dict[str, Any], Any]:
    """Everything the reconcile may touch, read on a fresh connection."""
    with connection(db):
        store = PeeweeStore(db)
        tags = {
            slug: (v.tags if (v := store.reads.published_article("alice", slug)) else None) for slug in "abc"
        }
        tag_paths = sorted(row[0] for row in db.execute_sql("SELECT path FROM tags").fetchall())
        return store.reconcile.load_index(user_id), {"tags": tags, "all": tag_paths}, None


# Where the worker's connection dies. On MySQL/TiDB the transaction's statements travel together in one
# round trip, so the kill happens on the server, in a
# trigger that sleeps while that statement runs: everything before it in the transaction has executed.
# (table, trigger event, condition on the row): the statement that is running when the kill lands.
KILL_POINTS = {
    "during the article upsert": ("articles", "INSERT", "1"),
    "after the upsert, during the new tags": ("tags", "INSERT", "1"),
    "after the tags, during the new pairs": ("article_tags", "INSERT", "1"),
    "during the archive, just before COMMIT": ("articles", "UPDATE", "NEW.archived"),
}


def sleep_in_trigger(db: peewee.Database, table: str, event: str, condition: str) -> None:
    db.execute_sql(
        f"CREATE TRIGGER fault_sleep BEFORE {event} ON {table} FOR EACH ROW "
        f"SET @fault_slept = IF({condition}, SLEEP(30), 0)"
    )


def kill_when_sleeping(admin: Any, session: int) -> threading.Thread:
    """Kill ``session`` as soon as the server shows it inside the trigger's SLEEP (at most 10 s)."""

    def watch() -> None:
        deadline = time.monotonic() + 10
        cursor = admin.cursor()
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s AND STATE = 'User sleep'",
                (session,),
            )
            if cursor.fetchone()[0]:
                cursor.execute(f"KILL {int(session)}")
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


@pytest.mark.mysql
@pytest.mark.parametrize("kill_point", list(KILL_POINTS))
def test_connection_killed_mid_apply_leaves_nothing_partial(
    mysql_url: str, mysql_server: str, kill_point: str
) -> None:
    # GIVEN a database with V1 and an admin session that can kill the worker's connection
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.users.add_user("alice", "a@example.com", 1)
        apply_as_worker(store, user.id, V1, [], T0)
        sleep_in_trigger(db, *KILL_POINTS[kill_point])
    before = snapshot(db, user.id)
    admin = server_from_url(mysql_server).connect()
    try:
        # WHEN the connection is killed while the server runs that statement of the transaction
        with pytest.raises(DatabaseUnavailable), connection(db):
            worker_session = db.execute_sql("SELECT CONNECTION_ID()").fetchone()[0]
            killer = kill_when_sleeping(admin, worker_session)
            try:
                apply_as_worker(PeeweeStore(db), user.id, V2, ["b"], at(60))
            finally:
                killer.join()
    finally:
        admin.close()

    # THEN nothing of V2 is visible, and the next job works on a fresh connection
    assert snapshot(db, user.id) == before
    with connection(db):
        db.execute_sql("DROP TRIGGER fault_sleep")
        result = apply_as_worker(PeeweeStore(db), user.id, V2, ["b"], at(60))
    assert (result.written, result.archived) == (2, 1)


@pytest.mark.mysql
def test_connection_killed_between_the_index_read_and_the_writes_leaves_nothing_partial(
    mysql_url: str, mysql_server: str
) -> None:
    # GIVEN a database with V1
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.users.add_user("alice", "a@example.com", 1)
        apply_as_worker(store, user.id, V1, [], T0)
    before = snapshot(db, user.id)
    admin = server_from_url(mysql_server).connect()
    try:
        # WHEN the connection is killed once the worker read the index under the user's lock
        with pytest.raises(DatabaseUnavailable), connection(db):
            worker_session = db.execute_sql("SELECT CONNECTION_ID()").fetchone()[0]
            store = PeeweeStore(db)
            with store.locks.user_lock(user.id, 5.0):
                index = store.reconcile.load_index(user.id)
                admin.cursor().execute(f"KILL {int(worker_session)}")
                store.reconcile.apply(user.id, V2, ["b"], at(60), index=index)
    finally:
        admin.close()

    # THEN the write failed as retryable, and nothing of V2 is visible
    assert snapshot(db, user.id) == before


@pytest.fixture
def failing_tag_insert(seeded: tuple[peewee.Database, int]) -> Iterator[tuple[peewee.Database, int]]:
    """``seeded`` with a trigger that fails every new article-tag pair, as a full disk would."""
    db, user_id = seeded
    with connection(db):
        if is_mysql(db):
            db.execute_sql(
                "CREATE TRIGGER fault_boom BEFORE INSERT ON article_tags FOR EACH ROW "
                "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'disk full'"
            )
        else:
            db.execute_sql(
                "CREATE TRIGGER fault_boom BEFORE INSERT ON article_tags "
                "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
            )
    yield db, user_id
    with connection(db):
        db.execute_sql("DROP TRIGGER fault_boom")


def test_failing_statement_mid_apply_rolls_everything_back(
    failing_tag_insert: tuple[peewee.Database, int],
) -> None:
    db, user_id = failing_tag_insert
    before = snapshot(db, user_id)

    # WHEN a statement late in the transaction fails (after the upsert and the new tags)
    with connection(db):
        with pytest.raises(peewee.PeeweeException, match="disk full"):
            apply_as_worker(PeeweeStore(db), user_id, V2, ["b"], at(60))
        # THEN the same session sees none of it: the transaction was rolled back, not left open
        same_session = PeeweeStore(db).reconcile.load_index(user_id)

    assert same_session == before[0]
    assert snapshot(db, user_id) == before
    assert db.is_closed()


@pytest.mark.mysql
def test_connection_lost_outside_a_transaction_is_retryable_and_heals(
    mysql_url: str, mysql_server: str
) -> None:
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        PeeweeStore(db).users.add_user("alice", "a@example.com", 1)
    admin = server_from_url(mysql_server).connect()
    try:
        with pytest.raises(DatabaseUnavailable), connection(db):
            session = db.execute_sql("SELECT CONNECTION_ID()").fetchone()[0]
            admin.cursor().execute(f"KILL {int(session)}")
            PeeweeStore(db).users.get_user("alice")
    finally:
        admin.close()
    with connection(db):
        assert PeeweeStore(db).users.get_user("alice") is not None


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_database_is_unavailable_quickly() -> None:
    db = open_database(f"mysql://app:secret-pw@127.0.0.1:{closed_port()}/blog")
    started = time.monotonic()

    with pytest.raises(DatabaseUnavailable) as raised, connection(db):
        pytest.fail("connected to a closed port")

    assert time.monotonic() - started < 3
    assert "secret-pw" not in str(raised.value)
    assert db.is_closed()


def test_store_call_without_connection_block_still_translates() -> None:
    db = open_database(f"mysql://app:pw@127.0.0.1:{closed_port()}/blog")
    with pytest.raises(DatabaseUnavailable):
        PeeweeStore(db).users.get_user("alice")
