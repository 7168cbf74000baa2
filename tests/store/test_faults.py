"""Database faults: unreachable at start, connection dropped mid-transaction, a failing statement.
Whatever happens, the reconcile leaves nothing partial and the error says whether to retry."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import peewee
import pytest

from function.db import DatabaseUnavailable, connection, open_database
from function.models import create_tables
from function.store import PeeweeStore, StoredArticle
from tests.store.builders import T0, article, at
from tests.support.mariadb import server_from_url

V1 = [article("a", tags=("x",)), article("b", tags=("y",))]
V2 = [article("a", body="edited", tags=("x", "new/tag")), article("c", tags=("z",))]


@pytest.fixture
def seeded(db_url: str) -> Iterator[tuple[peewee.Database, int]]:
    """A database holding V1 for user alice (head "h1"), not connected."""
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.add_user("alice", "a@example.com", 1)
        store.apply(user.id, V1, [], T0)
    yield db, user.id


def snapshot(db: peewee.Database, user_id: int) -> tuple[dict[str, StoredArticle], dict[str, Any], Any]:
    """Everything the reconcile may touch, read on a fresh connection."""
    with connection(db):
        store = PeeweeStore(db)
        tags = {slug: (v.tags if (v := store.published_article("alice", slug)) else None) for slug in "abc"}
        tag_paths = sorted(row[0] for row in db.execute_sql("SELECT path FROM tags").fetchall())
        return store.load_index(user_id), {"tags": tags, "all": tag_paths}, None


def fail_after(db: peewee.Database, sql_prefix: str, action: Any) -> Any:
    """A query hook (Peewee's public hook list) that runs ``action`` once a statement starting with
    ``sql_prefix`` has been executed."""

    def hook(event: Any) -> None:
        if event.exception is None and event.sql.replace("`", '"').startswith(sql_prefix):
            action()

    db.query_hooks.append(hook)
    return hook


KILL_POINTS = [
    'SELECT "t1"."slug", "t1"."id"',  # after the locked read
    'INSERT INTO "articles"',  # after the article upsert
    'INSERT IGNORE INTO "tags"',  # after the new tags
    'INSERT INTO "article_tags"',  # after the new pairs
    'UPDATE "articles"',  # the archive, just before COMMIT
]


@pytest.mark.mysql
@pytest.mark.parametrize("kill_after", KILL_POINTS)
def test_connection_killed_mid_apply_leaves_nothing_partial(
    mysql_url: str, mysql_server: str, kill_after: str
) -> None:
    # GIVEN a database with V1 and an admin session that can kill the worker's connection
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.add_user("alice", "a@example.com", 1)
        store.apply(user.id, V1, [], T0)
    before = snapshot(db, user.id)
    admin = server_from_url(mysql_server).connect()
    try:
        # WHEN the connection is killed between two statements of the reconcile
        with pytest.raises(DatabaseUnavailable), connection(db):
            worker_session = db.execute_sql("SELECT CONNECTION_ID()").fetchone()[0]
            hook = fail_after(db, kill_after, lambda: admin.cursor().execute(f"KILL {int(worker_session)}"))
            try:
                PeeweeStore(db).apply(user.id, V2, ["b"], at(60))
            finally:
                db.query_hooks.remove(hook)
    finally:
        admin.close()

    # THEN nothing of V2 is visible, and the next job works on a fresh connection
    assert snapshot(db, user.id) == before
    with connection(db):
        result = PeeweeStore(db).apply(user.id, V2, ["b"], at(60))
    assert (result.written, result.archived) == (2, 1)


def test_failing_statement_mid_apply_rolls_everything_back(seeded: tuple[peewee.Database, int]) -> None:
    db, user_id = seeded
    before = snapshot(db, user_id)

    def explode() -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"), connection(db):
        hook = fail_after(db, 'INSERT INTO "article_tags"', explode)
        try:
            PeeweeStore(db).apply(user_id, V2, ["b"], at(60))
        finally:
            db.query_hooks.remove(hook)

    assert snapshot(db, user_id) == before
    assert db.is_closed()


@pytest.mark.mysql
def test_connection_lost_outside_a_transaction_is_retryable_and_heals(
    mysql_url: str, mysql_server: str
) -> None:
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        PeeweeStore(db).add_user("alice", "a@example.com", 1)
    admin = server_from_url(mysql_server).connect()
    try:
        with pytest.raises(DatabaseUnavailable), connection(db):
            session = db.execute_sql("SELECT CONNECTION_ID()").fetchone()[0]
            admin.cursor().execute(f"KILL {int(session)}")
            PeeweeStore(db).get_user("alice")
    finally:
        admin.close()
    with connection(db):
        assert PeeweeStore(db).get_user("alice") is not None


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
        PeeweeStore(db).get_user("alice")
