"""``blog-api migrate`` (and ``init-db``, which runs it): an earlier database brought up to date in place,
saying what ran; a newer one refused, by them and by ``sync``."""

from __future__ import annotations

from pathlib import Path

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.migrations.steps import SCHEMA_VERSION, STEPS
from function.store.migrations.version import SchemaVersion
from function.store.schema import schema_differences
from tests.kit.cli import run_cli
from tests.kit.old_databases import make_old_database

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "articles"
UP_TO_DATE = f"schema version {SCHEMA_VERSION}: up to date\n"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/blog.db"


def test_migrate_brings_an_eaf72ea_database_up_to_date_and_prints_each_step(db_url: str) -> None:
    # GIVEN the database eaf72ea made
    make_old_database(open_database(db_url))

    # WHEN the operator migrates it, twice
    first = run_cli("migrate", env={"DATABASE_URL": db_url})
    second = run_cli("migrate", env={"DATABASE_URL": db_url})

    # THEN the first run says the versions and each step, the second that there is nothing to do
    assert first.exit_code == 0, first.stderr
    assert first.stdout.splitlines() == [
        f"migrated the schema from version 0 to {SCHEMA_VERSION}:",
        *(f"  {number}. {name}" for number, name, _ in STEPS),
    ]
    assert (second.exit_code, second.stdout) == (0, UP_TO_DATE)
    db = open_database(db_url)
    with connection(db):
        assert schema_differences(db) == []
    db.close()


def test_init_db_twice_changes_nothing_the_second_time(url: str) -> None:
    env = {"DATABASE_URL": url}
    first = run_cli("init-db", env=env)
    db = open_database(url)
    with connection(db):
        schema = db.execute_sql("SELECT sql FROM sqlite_master ORDER BY name").fetchall()

    second = run_cli("init-db", env=env)

    assert first.stdout == f"created the tables at schema version {SCHEMA_VERSION}\ndatabase ready\n"
    assert (second.exit_code, second.stdout) == (0, UP_TO_DATE + "database ready\n")
    with connection(db):
        assert db.execute_sql("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == schema
        assert SchemaVersion.select().bind(db).count() == 1
    db.close()


def test_migrate_creates_no_sqlite_file(tmp_path: Path) -> None:
    result = run_cli("migrate", env={"DATABASE_URL": f"sqlite:///{tmp_path}/typo.db"})

    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: no database at {tmp_path / 'typo.db'}")
    assert not (tmp_path / "typo.db").exists()


def _migrated_by_a_newer_version(url: str) -> None:
    db = open_database(url)
    with connection(db):
        SchemaVersion.insert(version=SCHEMA_VERSION + 1, name="a newer step").bind(db).execute()
    db.close()


NEWER = (
    f"error: this blog-api needs database schema version {SCHEMA_VERSION} and found version "
    f"{SCHEMA_VERSION + 1}, made by a newer blog-api: run that version (or a newer one) against this "
    "database\n"
)


def test_migrate_and_init_db_refuse_a_database_a_newer_version_migrated(url: str) -> None:
    env = {"DATABASE_URL": url}
    assert run_cli("init-db", env=env).exit_code == 0
    _migrated_by_a_newer_version(url)

    for command in ("migrate", "init-db"):
        result = run_cli(command, env=env)
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", NEWER), command


def test_sync_refuses_a_database_a_newer_version_migrated(url: str) -> None:
    env = {"DATABASE_URL": url, "ARTICLE_SOURCE": f"dir:{EXAMPLES}"}
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    _migrated_by_a_newer_version(url)

    result = run_cli("sync", "--user", "demo", env=env)

    assert (result.exit_code, result.stderr) == (1, NEWER)
    assert "synced" not in result.stdout


def test_sync_on_an_older_database_says_to_run_migrate(url: str) -> None:
    env = {"DATABASE_URL": url, "ARTICLE_SOURCE": f"dir:{EXAMPLES}"}
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    db = open_database(url)
    with connection(db):
        db.execute_sql("DROP TABLE schema_version")
    db.close()

    refused = run_cli("sync", "--user", "demo", env=env)
    assert run_cli("migrate", env=env).exit_code == 0
    synced = run_cli("sync", "--user", "demo", env=env)

    assert refused.exit_code == 1
    assert "found version 0: run `blog-api migrate`" in refused.stderr
    assert synced.exit_code == 0, synced.stderr
