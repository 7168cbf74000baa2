"""A job runs only on the schema its code reads and writes: ``/events`` refuses a newer one for good, and an
older one until ``blog-api migrate`` has run; the check costs one statement per process."""

from __future__ import annotations

import pytest

from function.errors import PassThroughFailed
from function.store.connection import connection
from function.store.migrations.steps import SCHEMA_VERSION
from function.store.migrations.version import SchemaVersion
from tests.kit.blog_fixtures import Blog, article
from tests.kit.cli import run_cli
from tests.kit.statements import count_statements


def test_a_push_on_a_schema_a_newer_version_migrated_is_refused_for_good(blog: Blog) -> None:
    # GIVEN a database a newer blog-api migrated one step further
    blog.commit({"articles/a.md": article("A")})
    with connection(blog.db) as db:
        SchemaVersion.insert(version=SCHEMA_VERSION + 1, name="a newer step").bind(db).execute()

    # WHEN a push reaches the worker through /events
    answer = blog.deliver_via_lambda(delivery="newer")

    # THEN a 4xx, returned and not raised (Lambda does not retry it), names both versions
    assert answer["statusCode"] == 409
    assert answer["body"] == {
        "error": "SCHEMA_MISMATCH",
        "message": f"this blog-api needs database schema version {SCHEMA_VERSION} and found version "
        f"{SCHEMA_VERSION + 1}, made by a newer blog-api: run that version (or a newer one) against "
        "this database",
    }
    # AND the job touched nothing: no delivery recorded, no article written
    with blog.store() as store:
        assert store.get_delivery("newer") is None
    assert blog.articles() == []


def test_a_push_on_an_older_schema_is_retried_and_passes_once_migrate_ran(blog: Blog) -> None:
    # GIVEN a database from before schema versions
    blog.commit({"articles/a.md": article("A")})
    with connection(blog.db) as db:
        db.execute_sql("DROP TABLE schema_version")

    # WHEN a push reaches the worker THEN it fails with a retryable 503 that says what to run
    with pytest.raises(PassThroughFailed) as failed:
        blog.deliver_via_lambda(delivery="older")
    assert "503" in str(failed.value)
    assert (
        f"this blog-api needs database schema version {SCHEMA_VERSION} and found version 0: run "
        "`blog-api migrate`"
    ) in str(failed.value)

    # WHEN the operator migrates and Lambda retries THEN the push syncs
    migrated = run_cli("migrate", env={"DATABASE_URL": blog.settings.database_url})
    assert migrated.exit_code == 0, migrated.stderr
    answer = blog.deliver_via_lambda(delivery="older")
    assert answer["statusCode"] == 200
    assert [a["slug"] for a in blog.articles()] == ["a"]


def test_the_version_is_read_once_per_process_not_once_per_push(blog: Blog) -> None:
    blog.commit({"articles/a.md": article("A")})
    with count_statements(blog.db) as first:
        assert blog.deliver_via_lambda(delivery="first")["statusCode"] == 200
    blog.commit({"articles/b.md": article("B")})
    with count_statements(blog.db) as second:
        assert blog.deliver_via_lambda(delivery="second")["statusCode"] == 200

    assert len([s for s in first.statements if "schema_version" in s]) == 1
    assert [s for s in second.statements if "schema_version" in s] == []
