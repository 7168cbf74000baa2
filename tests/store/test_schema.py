"""Tables that differ from this version's in a way no migration step mends are reported by name, not used
blindly; an earlier database is migrated by ``init-db``."""

from __future__ import annotations

import pytest

from function.errors import DatabaseNotInitialised
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.steps import SCHEMA_VERSION
from function.store.schema import create_tables, schema_differences
from tests.kit.cli import run_cli


def test_tables_this_version_made_have_no_differences(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        assert schema_differences(db) == []
    db.close()


def test_a_missing_column_and_an_unknown_required_column_are_named(db_url: str) -> None:
    # GIVEN tables made by an older version: articles without tags_hash, users with a required
    # column this version does not write
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        db.execute_sql("ALTER TABLE articles DROP COLUMN tags_hash")
        db.execute_sql("ALTER TABLE users ADD COLUMN synced_head_sha VARCHAR(40) NOT NULL")
        db.execute_sql("ALTER TABLE users ADD COLUMN nickname VARCHAR(40)")  # nullable: harmless

        differences = schema_differences(db)
    db.close()

    assert differences == [
        "users.synced_head_sha is not known to this version and is NOT NULL",
        "articles.tags_hash is missing",
    ]


def test_init_db_refuses_tables_no_step_mends_with_one_line_that_says_what_to_do(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN tables at this version whose column someone dropped by hand
    db = open_database(sqlite_url)
    with connection(db):
        create_tables(db)
        db.execute_sql("ALTER TABLE articles DROP COLUMN tags_hash")
    db.close()

    result = run_cli("init-db", env={"DATABASE_URL": sqlite_url, "GITHUB_WEBHOOK_SECRET": "s"})

    assert result.exit_code == 1
    assert "database ready" not in result.stdout
    assert result.stderr.count("\n") == 1
    assert "articles.tags_hash is missing" in result.stderr
    assert "no migration step mends" in result.stderr


def test_init_db_adds_the_repository_id_column_to_an_older_users_table_and_keeps_its_rows(
    db_url: str,
) -> None:
    # GIVEN a database from before users.repository_id (and before schema versions), with a user in it
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        PeeweeStore(db).add_user("alice", "alice@example.com", 1, "alice/blog")
        db.execute_sql("DROP TABLE schema_version")
        db.execute_sql("ALTER TABLE users DROP COLUMN repository_id")
        assert schema_differences(db) == ["users.repository_id is missing"]
    db.close()

    result = run_cli("init-db", env={"DATABASE_URL": db_url, "GITHUB_WEBHOOK_SECRET": "s"})

    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"migrated the schema from version 0 to {SCHEMA_VERSION}:"
    assert result.stdout.endswith("database ready\n")
    db = open_database(db_url)
    with connection(db):
        assert schema_differences(db) == []
        user = PeeweeStore(db).get_user("alice")
    db.close()
    assert user is not None and (user.repository, user.repository_id) == ("alice/blog", None)


def test_a_database_without_tables_is_reported_as_not_initialised(db_url: str) -> None:
    # Retryable (503) and saying what to run, on both backends' "no such table" errors.
    db = open_database(db_url)
    with pytest.raises(DatabaseNotInitialised, match="init-db"), connection(db):
        PeeweeStore(db).get_user("alice")
    db.close()
