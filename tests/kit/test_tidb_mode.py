"""The TiDB-faithful test database does what TiDB does where MariaDB alone would not: each behaviour
through the real server and the real driver, as the store meets it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from tests.kit.mariadb import server_from_url
from tests.kit.tidb_proxy import TiDBRelay
from tests.kit.tidb_triggers import ENTRY_LIMIT

pytestmark = pytest.mark.mysql

MiB = 1024 * 1024


def connect(url: str) -> pymysql.connections.Connection[Any]:
    info = server_from_url(url)
    database = url.rsplit("/", 1)[1].split("?")[0]
    return pymysql.connect(
        host=info.host,
        port=info.port,
        user=info.user,
        password=info.password,
        database=database,
        autocommit=True,
        client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS,
        read_timeout=30,
    )


@pytest.fixture
def tidb(tidb_url: str) -> Iterator[pymysql.connections.Connection[Any]]:
    """A connection through the relay to a database with one table of text rows and an index."""
    conn = connect(tidb_url)
    with conn.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE notes (id BIGINT PRIMARY KEY AUTO_INCREMENT, slug VARCHAR(100), body LONGTEXT, "
            "KEY notes_slug (slug))"
        )
    yield conn
    conn.close()


def run(conn: pymysql.connections.Connection[Any], sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with conn.cursor() as cursor:
        cursor.execute(sql, args or None)
        rows = list(cursor.fetchall())
        while cursor.nextset():
            pass
    return rows


def test_a_row_of_six_mib_fails_with_tidbs_entry_too_large(tidb: pymysql.connections.Connection[Any]) -> None:
    with pytest.raises(pymysql.err.OperationalError) as refused:
        run(tidb, "INSERT INTO notes (slug, body) VALUES ('big', REPEAT('x', %s))", ENTRY_LIMIT)

    assert refused.value.args[0] == 8025
    assert "entry too large, the max entry size is 6291456" in refused.value.args[1]
    assert run(tidb, "SELECT COUNT(*) FROM notes") == [(0,)]
    # Just under the limit (the key, the header and the other columns count too) is written.
    run(tidb, "INSERT INTO notes (slug, body) VALUES ('fits', REPEAT('x', %s))", ENTRY_LIMIT - 200)
    assert run(tidb, "SELECT slug FROM notes") == [("fits",)]


def test_an_update_rewrites_the_whole_row_so_a_flag_on_a_big_row_is_counted_in_full(
    tidb: pymysql.connections.Connection[Any], tidb_relay: TiDBRelay
) -> None:
    run(tidb, "INSERT INTO notes (slug, body) VALUES ('a', REPEAT('x', %s))", 3 * MiB)
    with tidb_relay.limits(txn=2 * MiB):
        # Changing the short column rewrites the 3 MiB of text as well: past a 2 MiB transaction.
        with pytest.raises(pymysql.err.OperationalError) as refused:
            run(tidb, "UPDATE notes SET slug = 'b'")
        # An UPDATE that changes nothing writes nothing, in TiDB too.
        run(tidb, "UPDATE notes SET slug = 'a'")
    assert refused.value.args[0] == 8004


def test_a_transaction_over_the_limit_fails_with_8004_and_the_next_one_starts_from_zero(
    tidb: pymysql.connections.Connection[Any], tidb_relay: TiDBRelay
) -> None:
    with tidb_relay.limits(txn=100_000):
        # GIVEN a transaction that writes 60 KB twice
        run(tidb, "BEGIN")
        run(tidb, "INSERT INTO notes (slug, body) VALUES ('one', REPEAT('x', 60000))")
        with pytest.raises(pymysql.err.OperationalError) as refused:
            run(tidb, "INSERT INTO notes (slug, body) VALUES ('two', REPEAT('x', 60000))")
        run(tidb, "ROLLBACK")
        # THEN the second statement failed as TiDB fails it, and nothing was kept
        assert refused.value.args[0] == 8004
        assert refused.value.args[1].startswith("Transaction is too large, size: ")
        assert run(tidb, "SELECT COUNT(*) FROM notes") == [(0,)]
        # AND the same 60 KB in statements of their own (each its own transaction) pass, as do
        # transactions sent in one round trip with their BEGIN and COMMIT
        run(tidb, "INSERT INTO notes (slug, body) VALUES ('one', REPEAT('x', 60000))")
        run(tidb, "INSERT INTO notes (slug, body) VALUES ('two', REPEAT('x', 60000))")
        run(tidb, "BEGIN;\nDELETE FROM notes WHERE slug = 'one';\nCOMMIT")
    assert run(tidb, "SELECT slug FROM notes") == [("two",)]


def test_the_default_transaction_limit_is_tidbs_hundred_mib(
    tidb: pymysql.connections.Connection[Any],
) -> None:
    run(tidb, "BEGIN")
    for i in range(19):  # 95 MiB
        run(tidb, "INSERT INTO notes (slug, body) VALUES (%s, REPEAT('x', %s))", f"n{i}", 5 * MiB)
    with pytest.raises(pymysql.err.OperationalError) as refused:  # 100 MiB and the rows' keys
        run(tidb, "INSERT INTO notes (slug, body) VALUES ('n20', REPEAT('x', %s))", 5 * MiB)
    run(tidb, "ROLLBACK")

    assert refused.value.args[0] == 8004


def test_a_plain_select_in_a_transaction_reads_the_snapshot_taken_at_begin(
    tidb: pymysql.connections.Connection[Any], tidb_url: str
) -> None:
    other = connect(tidb_url)
    try:
        run(tidb, "BEGIN")
        run(other, "INSERT INTO notes (slug, body) VALUES ('later', '')")  # committed after our BEGIN

        assert run(tidb, "SELECT COUNT(*) FROM notes") == [(0,)]
        assert run(tidb, "SELECT COUNT(*) FROM notes FOR UPDATE") == [(1,)]  # a locking read: the latest
        run(tidb, "COMMIT")
    finally:
        other.close()


def test_get_lock_waits_at_least_one_second_for_a_held_lock(
    tidb: pymysql.connections.Connection[Any], tidb_url: str
) -> None:
    other = connect(tidb_url)
    try:
        assert run(tidb, "SELECT GET_LOCK('blog', 0)") == [(1,)]
        started = time.monotonic()
        assert run(other, "SELECT GET_LOCK('blog', 0)") == [(0,)]
        waited = time.monotonic() - started
        run(tidb, "SELECT RELEASE_LOCK('blog')")
        assert run(other, "SELECT GET_LOCK('blog', 0)") == [(1,)]  # free: at once
    finally:
        other.close()
    assert waited >= 0.95


def test_a_table_created_through_the_relay_is_checked_before_anyone_writes_to_it(tidb_url: str) -> None:
    creator, writer = connect(tidb_url), connect(tidb_url)
    try:
        run(creator, "CREATE TABLE later (id INT PRIMARY KEY, body LONGTEXT)")
        with pytest.raises(pymysql.err.OperationalError) as refused:
            run(writer, "INSERT INTO later VALUES (1, REPEAT('x', %s))", ENTRY_LIMIT)
        run(creator, "ALTER TABLE later ADD COLUMN extra LONGTEXT")
        with pytest.raises(pymysql.err.OperationalError) as still:
            run(writer, "INSERT INTO later VALUES (2, 'x', REPEAT('y', %s))", ENTRY_LIMIT)
    finally:
        creator.close()
        writer.close()
    assert refused.value.args[0] == still.value.args[0] == 8025


def test_sessions_at_once_each_count_their_own_transaction(
    tidb_url: str, tidb_relay: TiDBRelay, tidb: pymysql.connections.Connection[Any]
) -> None:
    failures: list[int] = []

    def write(name: str) -> None:
        conn = connect(tidb_url)
        try:
            for i in range(20):
                run(
                    conn,
                    f"BEGIN;\nINSERT INTO notes (slug, body) VALUES ('{name}{i}', REPEAT('x', 30000));"
                    "\nCOMMIT",
                )
        except pymysql.err.OperationalError as exc:
            failures.append(exc.args[0])
        finally:
            conn.close()

    with tidb_relay.limits(txn=50_000):
        threads = [threading.Thread(target=write, args=(name,)) for name in "abc"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    assert run(tidb, "SELECT COUNT(*) FROM notes") == [(60,)]
