"""``blog-api deliveries``: recent deliveries from the deliveries table, newest first."""

from __future__ import annotations

from datetime import datetime, timedelta

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.steps import SCHEMA_VERSION
from function.store.schema import create_tables
from tests.kit.cli import run_cli

T0 = datetime(2026, 3, 2, 9, 0, 0)


def seed(db_url: str, n: int) -> None:
    """``n`` deliveries a minute apart: even ones succeed in 1.5 s, odd ones fail."""
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        for i in range(n):
            received = T0 + timedelta(minutes=i)
            store.start_delivery(f"d-{i:02d}", "push", 1, "alice/blog", received, received)
            ok = i % 2 == 0
            store.finish_delivery(
                f"d-{i:02d}",
                head_sha="abc",
                processed=3,
                succeeded=3 if ok else 2,
                failed=0 if ok else 1,
                archived=0,
                outcome="success" if ok else "partial",
                error=None if ok else "articles/x.md: bad YAML",
                now=received + timedelta(milliseconds=1500),
                written=1 if ok else 0,
                unchanged=2,
            )
    db.close()


def test_deliveries_lists_the_newest_first_with_duration_counts_and_outcome(sqlite_url: str) -> None:
    seed(sqlite_url, 5)

    result = run_cli("deliveries", "--limit", "2", env={"DATABASE_URL": sqlite_url})

    assert result.exit_code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split("\t")[:3] == ["delivery", "event", "received"]
    assert [row.split("\t")[0] for row in rows] == ["d-04", "d-03"]
    newest = rows[0].split("\t")
    assert newest[1:6] == ["push", "2026-03-02T09:04:00.000", "2026-03-02T09:04:01.500", "1500", "3/3/0"]
    # What changed: written/archived/unchanged, then the outcome and, for a failure, the failing paths.
    assert newest[6:] == ["1/0/2", "success"]
    assert rows[1].split("\t")[5:] == ["3/2/1", "0/0/2", "partial", "articles/x.md: bad YAML"]


def test_deliveries_default_limit_is_twenty(sqlite_url: str) -> None:
    seed(sqlite_url, 25)

    result = run_cli("deliveries", env={"DATABASE_URL": sqlite_url})

    assert len(result.stdout.splitlines()) == 1 + 20


def test_a_delivery_a_retry_may_pass_says_so_after_its_outcome(sqlite_url: str) -> None:
    # GIVEN a failed delivery whose file failed with a GitHub 502 (the worker records it retryable)
    seed(sqlite_url, 0)
    db = open_database(sqlite_url)
    with connection(db):
        store = PeeweeStore(db)
        store.start_delivery("d-502", "push", 1, "alice/blog", T0, T0)
        store.finish_delivery(
            "d-502",
            head_sha="abc",
            processed=1,
            succeeded=0,
            failed=1,
            archived=0,
            outcome="failed",
            error="articles/x.md: blob abc: GitHub answered 502",
            now=T0,
            retryable=True,
        )
    db.close()

    result = run_cli("deliveries", env={"DATABASE_URL": sqlite_url})

    assert result.stdout.splitlines()[1].split("\t")[7:] == [
        "failed (retryable)",
        "articles/x.md: blob abc: GitHub answered 502",
    ]


def test_deliveries_without_tables_is_a_one_line_error(sqlite_url: str) -> None:
    result = run_cli("deliveries", env={"DATABASE_URL": sqlite_url})

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ")


def test_init_db_adds_the_change_counts_to_a_table_made_before_them(sqlite_url: str) -> None:
    # GIVEN a deliveries table made by the version that did not count written/unchanged, with a row
    seed(sqlite_url, 1)
    db = open_database(sqlite_url)
    with connection(db):
        db.execute_sql("DROP TABLE schema_version")  # and before schema versions
        db.execute_sql("ALTER TABLE deliveries DROP COLUMN written")
        db.execute_sql("ALTER TABLE deliveries DROP COLUMN unchanged")
    db.close()
    env = {"DATABASE_URL": sqlite_url}

    # WHEN init-db runs THEN it adds the columns, keeps the row, and the old row shows "-" for them
    migrated = run_cli("init-db", env=env).stdout.splitlines()
    assert migrated[0] == f"migrated the schema from version 0 to {SCHEMA_VERSION}:"
    assert migrated[-1] == "database ready"
    result = run_cli("deliveries", env=env)

    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1].split("\t")[5:] == ["3/3/0", "-/0/-", "success"]


def test_what_a_delivery_recorded_is_printed_without_control_characters(db_url: str) -> None:
    # GIVEN a delivery recorded with escape sequences and tabs (an older version stored the unsigned
    # header as sent; an error can quote a file's name)
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        store.start_delivery("\x1b]0;owned\x07\x1b[2J", "push", 1, "alice/blog", T0, T0)
        store.finish_delivery(
            "\x1b]0;owned\x07\x1b[2J",
            head_sha=None,
            processed=0,
            succeeded=0,
            failed=1,
            archived=0,
            outcome="failed",
            error="articles/a\tb.md:\x1b[31m bad\r\n",
            now=T0,
        )
    db.close()
    # WHEN the operator lists the deliveries
    result = run_cli("deliveries", env={"DATABASE_URL": db_url})
    # THEN the line holds no control character but the column separators, and as many columns as ever
    assert result.exit_code == 0, result.stderr
    [line] = result.stdout.splitlines()[1:]
    assert not any(ord(c) < 32 and c != "\t" for c in line), repr(line)
    assert "\x1b" not in line and line.count("\t") == 8
