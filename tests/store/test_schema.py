"""A database whose tables another version of blog-api made is reported by name, not used blindly."""

from __future__ import annotations

import pytest

from function.errors import DatabaseNotInitialised
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.schema import create_tables, schema_differences
from tests.kit.builders import T0 as _T0
from tests.kit.builders import apply_as_worker
from tests.kit.builders import article as _article
from tests.kit.cli import run_cli


def test_tables_this_version_made_have_no_differences(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        assert schema_differences(db) == []
    db.close()


def test_a_nullable_column_a_newer_version_reads_is_added_keeping_the_rows(db_url: str) -> None:
    # GIVEN an articles table made before emoji existed, with a row in it
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.users.add_user("old", "o@example.com", None, None)
        apply_as_worker(store, user.id, [_article("kept")], [], _T0)
        db.execute_sql("ALTER TABLE articles DROP COLUMN emoji")
        assert schema_differences(db) == ["articles.emoji is missing"]
        # WHEN init-db runs THEN the column is there and the row is served, emoji null
        create_tables(db)
        assert schema_differences(db) == []
        views = store.reads.published_articles("old")
        assert views is not None and [(v.slug, v.emoji) for v in views] == [("kept", None)]
    db.close()


def test_the_retryable_column_is_added_and_old_records_keep_what_their_text_said(db_url: str) -> None:
    # GIVEN a deliveries table made before the retryable column, whose records said it in their text
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        for delivery_id, error in (
            ("transient", "articles/a.md: GitHub answered 502 [retryable]; articles/b.md: bad YAML"),
            ("broken", "articles/b.md: bad YAML"),
            ("clean", None),
        ):
            store.deliveries.start_delivery(delivery_id, "push", 1, "octo/blog", _T0, _T0)
            outcome = "failed" if error and "[retryable]" in error else "partial" if error else "success"
            store.deliveries.finish_delivery(
                delivery_id,
                head_sha="h1",
                processed=2,
                succeeded=1,
                failed=1,
                archived=0,
                outcome=outcome,
                error=error,
                now=_T0,
            )
        db.execute_sql("ALTER TABLE deliveries DROP COLUMN retryable")
        assert schema_differences(db) == ["deliveries.retryable is missing"]

        # WHEN init-db runs
        create_tables(db)

        # THEN the column is there, and each old record means what its text meant
        assert schema_differences(db) == []
        records = {d: store.deliveries.get_delivery(d) for d in ("transient", "broken", "clean")}
        retryable = {d: r.retryable for d, r in records.items() if r is not None}
        assert retryable == {"transient": True, "broken": False, "clean": False}
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


def test_init_db_refuses_an_older_schema_with_one_line_that_says_what_to_do(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    assert "migrate them" in result.stderr


def test_init_db_adds_the_repository_id_column_to_an_older_users_table_and_keeps_its_rows(
    db_url: str,
) -> None:
    # GIVEN a database from before users.repository_id, with a user in it
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        PeeweeStore(db).users.add_user("alice", "alice@example.com", 1, "alice/blog")
        db.execute_sql("ALTER TABLE users DROP COLUMN repository_id")
        assert schema_differences(db) == ["users.repository_id is missing"]
    db.close()

    result = run_cli("init-db", env={"DATABASE_URL": db_url, "GITHUB_WEBHOOK_SECRET": "s"})

    assert result.exit_code == 0, result.stderr
    assert "database ready" in result.stdout
    db = open_database(db_url)
    with connection(db):
        assert schema_differences(db) == []
        user = PeeweeStore(db).users.get_user("alice")
    db.close()
    assert user is not None and (user.repository, user.repository_id) == ("alice/blog", None)


def test_a_database_without_tables_is_reported_as_not_initialised(db_url: str) -> None:
    # Retryable (503) and saying what to run, on both backends' "no such table" errors.
    db = open_database(db_url)
    with pytest.raises(DatabaseNotInitialised, match="init-db"), connection(db):
        PeeweeStore(db).users.get_user("alice")
    db.close()
