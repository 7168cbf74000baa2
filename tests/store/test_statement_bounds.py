"""No statement grows with the number of articles, tags or tag sets beyond what the database allows:
statements are cut by the limits the database reports at run time, on both backends."""

from __future__ import annotations

import sqlite3

import pytest

from function.articles.parsed import ParsedArticle
from function.store.bounds import MAX_TERMS, StatementLimits, groups, limits_of, sqlite_limits
from function.store.facade import PeeweeStore
from function.store.records import RememberedFailure
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.statements import count_statements


def own_tag_sets(count: int, *, version: int = 0, body: str = "Hello.") -> list[ParsedArticle]:
    """``count`` articles, each with a tag set of its own (ten tags): the shape of a real Zenn blog
    that overflowed SQLite's parser when every tag set was one more nested OR term."""
    return [
        article(f"a{i:05}", body=body, tags=tuple(f"t{version}/{(i + k) % (count + 7)}" for k in range(10)))
        for i in range(count)
    ]


def test_a_tag_set_per_article_is_written_and_read_back(store: PeeweeStore) -> None:
    # GIVEN 1,200 articles, each with its own ten tags (1,200 distinct tag sets)
    user = store.users.add_user("alice", "a@example.com", 1)
    first = own_tag_sets(1200)

    # WHEN they are written, then every tag set changes
    apply_as_worker(store, user.id, first, [], T0)
    changed = own_tag_sets(1200, version=1, body="edited")
    with count_statements(store.db) as seen:
        result = store.reconcile.apply(user.id, changed, [], at(1), index=store.reconcile.load_index(user.id))

    # THEN every article carries exactly its new tags, and the pairs took a handful of statements
    assert result.written == 1200
    served = {a.slug: a.tags for a in store.reads.published_articles("alice") or []}
    assert served == {a.slug: a.tags for a in changed}
    pair_inserts = [s for s in seen.statements if "UNION ALL" in s or " SELECT " in s.split("FROM")[0]]
    assert 1200 / MAX_TERMS <= len(pair_inserts) <= 1200 / MAX_TERMS + 2
    assert " OR " not in " ".join(pair_inserts)


def test_chunking_follows_the_parameter_limit_sqlite_reports(sqlite_url: str) -> None:
    from function.store.backends import open_database
    from function.store.connection import connection
    from function.store.schema import create_tables

    db = open_database(sqlite_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.users.add_user("alice", "a@example.com", 1)
        # GIVEN a SQLite library that allows 40 host parameters and 3 SELECTs per compound (as an
        # old or differently built library would): any statement over it fails in SQLite itself
        raw = db.connection()
        raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 40)
        raw.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 3)
        assert limits_of(db) == StatementLimits(parameters=40, terms=3)

        # WHEN 300 articles with tag sets of their own are written, retagged, half archived, read,
        with count_statements(db) as seen:
            apply_as_worker(store, user.id, own_tag_sets(300), [], T0)
            apply_as_worker(store, user.id, own_tag_sets(150, version=1, body="edited"), [], at(1))
            result = apply_as_worker(store, user.id, [], [f"a{i:05}" for i in range(150, 300)], at(2))
            served = store.reads.published_articles("alice") or []

            # ... and 300 files that failed to parse are remembered, then 250 of them forgotten
            failures = [
                RememberedFailure(f"b{i:05}", f"articles/b{i:05}.md", f"{i:040x}", "broken")
                for i in range(300)
            ]
            store.reconcile.remember_failures(user.id, failures, [])
            store.reconcile.remember_failures(user.id, [], [f"b{i:05}" for i in range(250)])
            remembered = store.reconcile.load_failures(user.id)

        # THEN it all worked, every statement within the limits read
        assert sorted(remembered) == [f"b{i:05}" for i in range(250, 300)]
        assert result.archived == 150
        assert {a.slug: a.tags for a in served} == {
            a.slug: a.tags for a in own_tag_sets(150, version=1, body="edited")
        }
        assert max(s.count("?") for s in seen.statements) <= 40
        assert max(s.upper().count(" UNION ALL ") for s in seen.statements) == 2


def test_an_unchunked_statement_would_have_failed_at_that_limit(sqlite_url: str) -> None:
    # The limit above is real: SQLite refuses a statement with more parameters than it allows.
    connection = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"))
    connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 40)
    with pytest.raises(sqlite3.OperationalError, match="too many SQL variables"):
        connection.execute("SELECT 1 WHERE 1 IN (" + ", ".join("?" * 41) + ")", list(range(41)))
    assert sqlite_limits(connection).parameters == 40
    connection.close()


def test_groups_respect_the_count_and_every_weight() -> None:
    items = ["a" * n for n in (1, 2, 3, 10, 1, 1, 1, 1)]

    found = list(groups(items, max_items=3, weights=[(len, 5)]))

    assert found == [["a", "aa"], ["aaa"], ["a" * 10], ["a", "a", "a"], ["a"]]
    assert list(groups([], max_items=3)) == []
