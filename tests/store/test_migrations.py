"""Schema migrations: an earlier database is brought to this version's schema in place, each step once and
in order, and then serves what it served before; a stopped migration finishes when run again."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import peewee
import pytest

from function.app import create_app
from function.errors import LockTimeout, SchemaTooNew
from function.services import Services
from function.settings import Settings
from function.store.backends import is_mysql, open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.locks import server_lock_name
from function.store.migrations.operations import Migration
from function.store.migrations.runner import migrate
from function.store.migrations.steps import SCHEMA_VERSION, STEPS, Step
from function.store.migrations.version import SchemaVersion, read_version
from function.store.schema import schema_differences
from tests.kit.mariadb import server_from_url
from tests.kit.old_databases import assert_serves_as_before, make_old_database, recorded

# What versions before the nullable columns and the later tables made: the columns ``init-db`` used to add
# to existing tables, and the tables of the outgoing webhooks and the images.
OLDER_COLUMNS = (
    "users.repository_id",
    "users.github_account_id",
    "articles.emoji",
    "articles.toc",
    "deliveries.written",
    "deliveries.unchanged",
    "deliveries.retryable",
    "books.cover_url",
)
OLDER_TABLES = ("hook_endpoints", "hook_events", "hook_attempts", "assets", "asset_references")
STEP_NUMBERS = [number for number, _, _ in STEPS]


def schema_of(db: peewee.Database) -> dict[str, Any]:
    """Every table's columns (as the database describes each), indexes and foreign keys."""
    shape: dict[str, Any] = {}
    for table in sorted(db.get_tables()):
        if is_mysql(db):
            create = db.execute_sql(f"SHOW CREATE TABLE `{table}`").fetchone()[1]
            columns = {
                line.split("`")[1]: line.strip().rstrip(",")
                for line in create.splitlines()
                if line.startswith("  `")
            }
        else:
            columns = {c.name: (c.data_type, c.null, c.default) for c in db.get_columns(table)}
        shape[table] = {
            "columns": columns,
            "indexes": sorted((i.name, tuple(i.columns), i.unique) for i in db.get_indexes(table)),
            "foreign keys": sorted(
                (f.column, f.dest_table, f.dest_column) for f in db.get_foreign_keys(table)
            ),
        }
    return shape


def assert_schema_of_a_new_database(db: peewee.Database, new_url: str) -> None:
    fresh = open_database(new_url)
    with connection(fresh):
        report = migrate(fresh)
        assert report.before is None  # made afresh, no step ran
        expected = schema_of(fresh)
    fresh.close()
    assert schema_of(db) == expected
    assert schema_differences(db) == []


def versions(db: peewee.Database) -> list[tuple[int, str]]:
    query = SchemaVersion.select().order_by(SchemaVersion.version).bind(db)
    return [(row.version, row.name) for row in query]


def test_the_steps_are_numbered_from_one_in_order_and_named_once() -> None:
    numbers = [number for number, _, _ in STEPS]
    names = [name for _, name, _ in STEPS]

    # Work in progress elsewhere may hold a number (a step is numbered when it is planned), so a gap
    # can exist for a while; the order never changes.
    assert numbers[0] == 1
    assert numbers == sorted(set(numbers))
    assert len(set(names)) == len(names)
    assert SCHEMA_VERSION == numbers[-1]


def test_a_new_database_gets_every_table_at_the_last_version_without_running_a_step(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db):
        report = migrate(db)

        assert report.before is None and report.after == SCHEMA_VERSION and report.applied == ()
        assert report.lines() == [f"created the tables at schema version {SCHEMA_VERSION}"]
        assert versions(db) == [(SCHEMA_VERSION, f"new database at version {SCHEMA_VERSION}")]
        assert schema_differences(db) == []
        assert {"users", "articles", "deliveries", "books", "schema_version"} <= set(db.get_tables())
    db.close()


def test_a_database_made_by_eaf72ea_is_migrated_in_place_and_serves_the_same_answers(
    db_url: str, second_db_url: str, tmp_path: Path
) -> None:
    # GIVEN the database eaf72ea made, with its rows: users, tagged articles, a draft, books, deliveries
    snapshot = recorded()
    db = open_database(db_url)
    make_old_database(db)

    # WHEN it is migrated
    with connection(db):
        report = migrate(db)

        # THEN every step ran once, in order, and each is recorded
        assert report.before == 0 and report.after == SCHEMA_VERSION
        assert report.applied == tuple((number, name) for number, name, _ in STEPS)
        assert versions(db) == [(number, name) for number, name, _ in STEPS]
        # AND its schema is the one a new database gets, its rows all there
        assert_schema_of_a_new_database(db, second_db_url)
        for table, rows in snapshot["rows"].items():
            assert peewee.Table(table).select().bind(db).count() == len(rows), table

    # AND every page of the read routes answers what eaf72ea answered
    settings = Settings(
        **snapshot["settings"], database_url=db_url, article_source=f"dir:{tmp_path}", asset_dir=str(tmp_path)
    )
    client = create_app(services=Services(settings, database=db)).test_client()
    assert len(snapshot["answers"]) >= 20
    for before in snapshot["answers"]:
        answer = client.get(before["path"])
        body = answer.get_json() if answer.is_json else answer.get_data(as_text=True)
        assert answer.status_code == before["status"], before["path"]
        assert_serves_as_before(body, before["body"], before["path"])
    db.close()


def test_deliveries_marked_retryable_in_their_text_say_it_in_the_column_and_lose_the_mark(
    db_url: str,
) -> None:
    # GIVEN eaf72ea's deliveries: two failures its text marked "[retryable]", a permanent one, a success
    db = open_database(db_url)
    make_old_database(db)

    with connection(db):
        migrate(db)
        records = {
            d: PeeweeStore(db).deliveries.get_delivery(d) for d in ("d-transient", "d-budget", "d-permanent")
        }
        success = PeeweeStore(db).deliveries.get_delivery("d-success")

    assert {d: (r.retryable, r.error) for d, r in records.items() if r} == {
        "d-transient": (
            True,
            "articles/tidb-named-locks.md: blob 0123abcd: GitHub answered 502; "
            "articles/broken.md: front matter is not valid YAML",
        ),
        "d-budget": (
            True,
            "time budget reached, 2 files left for the next run: articles/a.md, articles/b.md",
        ),
        "d-permanent": (False, "articles/broken.md: front matter is not valid YAML"),
    }
    assert success is not None and (success.retryable, success.error) == (False, None)
    db.close()


def test_a_database_from_before_the_nullable_columns_and_later_tables_is_migrated_keeping_its_rows(
    db_url: str, second_db_url: str
) -> None:
    # GIVEN a database as older versions made it: without the columns init-db used to add, nor the tables
    # of webhooks and images; its deliveries said "retryable" only in their text
    db = open_database(db_url)
    make_old_database(db, without_tables=OLDER_TABLES, without_columns=OLDER_COLUMNS)
    with connection(db):
        assert "articles.emoji is missing" in schema_differences(db)

        # WHEN it is migrated
        report = migrate(db)

        # THEN it has this version's schema, and its rows, the new columns empty
        assert report.before == 0 and [number for number, _ in report.applied] == STEP_NUMBERS
        assert_schema_of_a_new_database(db, second_db_url)
        store = PeeweeStore(db)
        served = store.reads.published_articles("alice")
        assert served is not None
        assert [(a.slug, a.emoji) for a in served] == [
            ("autumn-walk", None),
            ("tidb-named-locks", None),
            ("lambda-cold-starts", None),
        ]
        user = store.users.get_user("alice")
        assert user is not None and (user.repository, user.repository_id) == ("alice/blog", None)
        retryable = {
            d: r.retryable
            for d in ("d-transient", "d-budget", "d-permanent")
            if (r := store.deliveries.get_delivery(d))
        }
        assert retryable == {"d-transient": True, "d-budget": True, "d-permanent": False}
    db.close()


def _stops_after(step: Step) -> Step:
    """``step``, stopping the run right after it did its work, before its version is recorded (a
    process killed, a connection lost)."""
    number, name, run = step

    def stopped(m: Migration) -> None:
        run(m)
        raise RuntimeError("the process died here")

    return number, name, stopped


def test_a_migration_stopped_after_its_ddl_runs_again_cleanly(db_url: str, second_db_url: str) -> None:
    # GIVEN an older database whose baseline step dies after its DDL, before recording itself
    db = open_database(db_url)
    make_old_database(db, without_columns=OLDER_COLUMNS)
    with connection(db):
        with pytest.raises(RuntimeError, match="died"):
            migrate(db, [_stops_after(STEPS[0]), *STEPS[1:]])
        assert read_version(db) == 0
        added = {c.name for c in db.get_columns("articles")} >= {"emoji", "toc"}
        # On MySQL/TiDB the DDL committed as it ran; SQLite rolled the step back with its transaction.
        assert added == is_mysql(db)

        # WHEN migrate runs again THEN it finishes the job
        report = migrate(db)

        assert [number for number, _ in report.applied] == STEP_NUMBERS
        assert read_version(db) == SCHEMA_VERSION
        assert_schema_of_a_new_database(db, second_db_url)
        assert peewee.Table("articles").select().bind(db).count() == len(recorded()["rows"]["articles"])
    db.close()


def test_a_data_step_stopped_before_its_record_runs_again_once(db_url: str) -> None:
    # GIVEN a migration that dies after the retryable step's UPDATE, before its record
    db = open_database(db_url)
    make_old_database(db)
    with connection(db):
        with pytest.raises(RuntimeError, match="died"):
            migrate(db, [STEPS[0], _stops_after(STEPS[1])])
        assert read_version(db) == 1

        # WHEN migrate runs again THEN only that step (and those after it) runs, and the text lost its
        # mark once
        report = migrate(db)

        assert [number for number, _ in report.applied] == STEP_NUMBERS[1:]
        record = PeeweeStore(db).deliveries.get_delivery("d-budget")
    assert record is not None and record.retryable
    assert record.error == "time budget reached, 2 files left for the next run: articles/a.md, articles/b.md"
    db.close()


def test_migrate_refuses_a_database_a_newer_version_migrated(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db):
        migrate(db)
        SchemaVersion.insert(version=SCHEMA_VERSION + 1, name="a step of a newer version").bind(db).execute()

        with pytest.raises(SchemaTooNew) as refused:
            migrate(db)

        assert str(refused.value) == (
            f"this blog-api needs database schema version {SCHEMA_VERSION} and found version "
            f"{SCHEMA_VERSION + 1}, made by a newer blog-api: run that version (or a newer one) against "
            "this database"
        )
        assert read_version(db) == SCHEMA_VERSION + 1
    db.close()


def test_two_migrators_at_once_run_each_step_once(db_url: str) -> None:
    # GIVEN an old database, and two processes' migrations of it starting together; a slow last step
    # counts its runs
    make_old_database(open_database(db_url))
    runs: list[str] = []

    def slow(m: Migration) -> None:
        runs.append(threading.current_thread().name)
        time.sleep(0.5)

    steps = [*STEPS, (SCHEMA_VERSION + 1, "a slow step", slow)]
    reports: dict[str, Any] = {}

    def run(name: str) -> None:
        db = open_database(db_url)
        try:
            reports[name] = migrate(db, steps)
        finally:
            db.close()

    threads = [threading.Thread(target=run, args=(name,), name=name) for name in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    # THEN each step ran in one of them only, and both end at the last version
    assert len(runs) == 1
    applied = sorted(number for report in reports.values() for number, _ in report.applied)
    assert applied == [number for number, _, _ in steps]
    assert {report.after for report in reports.values()} == {SCHEMA_VERSION + 1}


@pytest.mark.mysql
def test_a_second_migrator_waits_for_the_lock_then_says_so(mysql_url: str) -> None:
    # GIVEN another session holding the migration lock of this database
    db = open_database(mysql_url)
    holder = server_from_url(mysql_url).connect()
    try:
        with holder.cursor() as cursor:
            cursor.execute("SELECT GET_LOCK(%s, 1)", (server_lock_name(str(db.database), "migrate"),))
            assert cursor.fetchone() == (1,)

        # WHEN migrate runs THEN it waits, then refuses, having changed nothing
        with pytest.raises(LockTimeout, match=r"another `blog-api migrate` holds the migration lock"):
            migrate(db, lock_wait_s=1)
        with connection(db):
            assert db.get_tables() == []
    finally:
        holder.close()
        db.close()


def test_users_get_their_binding_columns_unbound_and_keep_their_rows(db_url: str, second_db_url: str) -> None:
    # GIVEN a database at the version before users were bound to a source
    db = open_database(db_url)
    make_old_database(db)
    before = next(i for i, (_, _, run) in enumerate(STEPS) if run.__name__ == "user_source_binding")
    with connection(db):
        migrate(db, list(STEPS[:before]))
        assert read_version(db) == STEP_NUMBERS[before - 1]
        assert not {c.name for c in db.get_columns("users")} & {"source", "removal_confirmed"}

        # WHEN it is migrated
        report = migrate(db)

        # THEN the step ran, the schema is a new database's, and every user is unbound, nothing confirmed
        assert [number for number, _ in report.applied] == STEP_NUMBERS[before:]
        assert_schema_of_a_new_database(db, second_db_url)
        user = PeeweeStore(db).users.get_user("alice")
        assert user is not None and (user.repository, user.source, user.removal_confirmed) == (
            "alice/blog",
            None,
            None,
        )
    db.close()
