"""Migration step 8 on a database an earlier version made, in place, on SQLite and MariaDB: the index
``last_sync`` reads is added, and the tags every blog shared become each user's own rows, each article
keeping exactly its tags; running it again changes nothing."""

from __future__ import annotations

from typing import Any

import peewee
import pytest
from playhouse.migrate import migrate as run_operations

from function.store.backends import is_mysql, open_database
from function.store.connection import connection
from function.store.migrations.operations import Migration
from function.store.migrations.runner import migrate
from function.store.migrations.steps import STEPS, last_sync_index_and_tags_per_user
from function.store.models import Tag
from function.store.schema import schema_differences
from tests.kit.old_databases import make_old_database, recorded

STEP = next(index for index, (_, _, run) in enumerate(STEPS) if run is last_sync_index_and_tags_per_user)
NUMBER = STEPS[STEP][0]
LAST_SYNC_INDEX = (("installation_id", "repository", "started_at", "delivery_id"), False)


def tags_of_articles(db: peewee.Database) -> dict[int, tuple[str, ...]]:
    """Each article's tag paths, through ``article_tags``."""
    rows = db.execute_sql(
        "SELECT at.article_id, t.path FROM article_tags AS at JOIN tags AS t ON t.id = at.tag_id"
    ).fetchall()
    tags: dict[int, list[str]] = {}
    for article_id, path in rows:
        tags.setdefault(article_id, []).append(path)
    return {article_id: tuple(sorted(paths)) for article_id, paths in tags.items()}


def tag_rows(db: peewee.Database) -> list[tuple[Any, ...]]:
    return sorted(db.execute_sql("SELECT id, user_id, path FROM tags").fetchall())


def indexes(db: peewee.Database, table: str) -> set[tuple[tuple[str, ...], bool]]:
    return {(tuple(i.columns), bool(i.unique)) for i in db.get_indexes(table)}


def an_earlier_database_with_two_blogs_sharing_tags(db: peewee.Database) -> None:
    """The database eaf72ea made (alice: four articles tagged aws, lambda, life, mysql, tidb), with a
    second blog whose article shares alice's aws and tidb rows and a tag no article uses any more,
    brought to the step before this one."""
    make_old_database(db)
    with connection(db):
        article = dict(recorded()["rows"]["articles"][0])
        user = dict(recorded()["rows"]["users"][1])
        peewee.Table("articles", columns=list(article)).insert(
            {**article, "id": 50, "user_id": user["id"], "slug": "bobs-post", "path": "articles/bobs-post.md"}
        ).bind(db).execute()
        shared = dict(db.execute_sql("SELECT path, id FROM tags").fetchall())
        db.execute_sql(
            "INSERT INTO article_tags (article_id, tag_id) VALUES (50, %s), (50, %s)".replace("%s", db.param),
            (shared["aws"], shared["tidb"]),
        )
        db.execute_sql("INSERT INTO tags (path) VALUES ('unused')")
        migrate(db, list(STEPS[:STEP]))
        # The version before this step had no index for last_sync (this version's baseline step, run
        # above with this version's models, adds the indexes the models declare).
        for index in db.get_indexes("deliveries"):
            if (tuple(index.columns), bool(index.unique)) == LAST_SYNC_INDEX:
                run_operations(Migration(db).migrator.drop_index("deliveries", index.name))


def test_step_8_adds_the_last_sync_index_and_gives_each_user_their_own_tags(
    db_url: str, second_db_url: str
) -> None:
    # GIVEN an earlier database where alice and bob's articles point at the same tag rows
    db = open_database(db_url)
    an_earlier_database_with_two_blogs_sharing_tags(db)
    with connection(db):
        before = tags_of_articles(db)
        assert before[50] == ("aws", "tidb")
        assert LAST_SYNC_INDEX not in indexes(db, "deliveries")
        users_of = dict(db.execute_sql("SELECT id, user_id FROM articles").fetchall())

        # WHEN it is migrated
        report = migrate(db)

        # THEN this step ran, in place
        assert (NUMBER, STEPS[STEP][1]) in report.applied
        # AND last_sync has its index
        assert LAST_SYNC_INDEX in indexes(db, "deliveries")
        # AND every article has exactly the tags it had, each a row of the article's own user
        assert tags_of_articles(db) == before
        pairs = db.execute_sql(
            "SELECT at.article_id, t.user_id FROM article_tags AS at JOIN tags AS t ON t.id = at.tag_id"
        ).fetchall()
        assert pairs and all(user == users_of[article] for article, user in pairs)
        # AND no shared row is left (the unused one gone), one row per user and path
        rows = tag_rows(db)
        assert {(user, path) for _, user, path in rows} == {
            (1, "aws"),
            (1, "lambda"),
            (1, "life"),
            (1, "mysql"),
            (1, "tidb"),
            (2, "aws"),
            (2, "tidb"),
        }
        assert len(rows) == 7
        # AND the tags table is what a new database has: unique per user and path, no unique path
        assert indexes(db, "tags") >= {(("user_id", "path"), True)}
        assert (("path",), True) not in indexes(db, "tags")
        if is_mysql(db):
            assert ("user_id", "users", "id") in {
                (fk.column, fk.dest_table, fk.dest_column) for fk in db.get_foreign_keys("tags")
            }
        assert schema_differences(db) == []

        # AND running the step again (a migration stopped before its record) changes nothing
        last_sync_index_and_tags_per_user(Migration(db))
        assert tag_rows(db) == rows and tags_of_articles(db) == before

    fresh = open_database(second_db_url)
    with connection(fresh):
        migrate(fresh)
        with connection(db):
            assert indexes(db, "tags") == indexes(fresh, "tags")
            assert indexes(db, "deliveries") == indexes(fresh, "deliveries")
    fresh.close()
    db.close()


@pytest.mark.parametrize("stopped_after", ["the column", "the index"])
def test_a_step_stopped_half_way_finishes_when_run_again(db_url: str, stopped_after: str) -> None:
    # GIVEN the database an earlier version made, where a first run of the step stopped part-way (on
    # MySQL/TiDB each DDL statement commits on its own)
    db = open_database(db_url)
    an_earlier_database_with_two_blogs_sharing_tags(db)
    with connection(db):
        before = tags_of_articles(db)
        m = Migration(db)
        run_operations(m.migrator.alter_add_column("tags", "user_id", Tag.user))
        if stopped_after == "the index":
            name = next(i.name for i in db.get_indexes("tags") if tuple(i.columns) == ("path",))
            run_operations(m.migrator.drop_index("tags", name))

        # WHEN it is migrated
        migrate(db)

        # THEN every article keeps its tags, each its own user's row
        assert tags_of_articles(db) == before
        assert all(user is not None for _, user, _ in tag_rows(db))
        assert schema_differences(db) == []
    db.close()
