"""The reconcile's cost does not grow with the number of articles (one more article INSERT per
CHUNK_SIZE given articles at most)."""

from __future__ import annotations

import pytest

from function.store.batching import CHUNK_SIZE
from function.store.facade import PeeweeStore
from tests.kit.builders import T0, apply_as_worker, article, at, moved
from tests.kit.statements import StatementLog, count_statements


def apply_new(store: PeeweeStore, user_id: int, count: int) -> StatementLog:
    articles = [article(f"a{i}", tags=("t", f"t/{i % 7}")) for i in range(count)]
    index = store.reconcile.load_index(user_id)
    with count_statements(store.db) as seen:
        store.reconcile.apply(user_id, articles, [], T0, index=index)
    return seen


def apply_changed(store: PeeweeStore, user_id: int, count: int) -> StatementLog:
    apply_as_worker(store, user_id, [article(f"a{i}", tags=("t",)) for i in range(count)], [], T0)
    changed = [article(f"a{i}", body="edited", tags=("t", "u")) for i in range(count)]
    archive = [f"gone{i}" for i in range(count)]
    index = store.reconcile.load_index(user_id)
    with count_statements(store.db) as seen:
        store.reconcile.apply(user_id, changed, archive, at(1), index=index)
    return seen


@pytest.mark.parametrize("scenario", [apply_new, apply_changed])
def test_apply_costs_the_same_for_10_and_300_articles(store: PeeweeStore, scenario: object) -> None:
    small_user = store.users.add_user("small", "s@example.com", 1)
    big_user = store.users.add_user("big", "b@example.com", 2)

    small = scenario(store, small_user.id, 10)  # type: ignore[operator]
    big = scenario(store, big_user.id, 300)  # type: ignore[operator]

    assert small.count == big.count, (small.statements, big.statements)
    # The search index's share: its two reads (the articles' index rows, then the postings their terms
    # touch), its two DELETEs and two INSERTs.
    assert big.count <= 14
    assert big.statements[0].startswith("BEGIN") and big.statements[-1] == "COMMIT"


def test_unchanged_articles_cost_their_rows_and_bodies_upserts_only(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    parsed = [article(f"a{i}", tags=("t",)) for i in range(50)]
    apply_as_worker(store, user.id, parsed, [], T0)

    index = store.reconcile.load_index(user.id)

    with count_statements(store.db) as seen:
        result = store.reconcile.apply(
            user.id, [moved(p, blob_sha=f"{i:040x}") for i, p in enumerate(parsed)], [], T0, index=index
        )

    assert result.unchanged == 50
    # One transaction of two upserts, the rows and their bodies: no tag work for unchanged content.
    writes = seen.statements[1:-1]
    assert [s.split(" (")[0].replace("`", '"') for s in writes] == [
        'INSERT INTO "articles"',
        'INSERT INTO "article_bodies"',
    ], seen.statements


def test_an_edit_with_the_same_tags_writes_its_row_its_body_and_its_search_postings_in_one_transaction(
    store: PeeweeStore,
) -> None:
    # GIVEN the index read under the user's lock (as the worker does)
    user = store.users.add_user("alice", "a@example.com", 1)
    apply_as_worker(store, user.id, [article(f"a{i}", tags=("t",)) for i in range(50)], [], T0)
    index = store.reconcile.load_index(user.id)

    # WHEN one article's body changes (same tags)
    with count_statements(store.db) as seen:
        result = store.reconcile.apply(
            user.id, [article("a7", body="edited", tags=("t",))], [], at(1), index=index
        )

    # THEN the write is one transaction: the article's row, its body's, and its search terms replaced
    # (no tag work, no read: the article's id is in the index), and it took effect
    assert (result.written, result.unchanged) == (1, 0)
    assert seen.statements[0].startswith("BEGIN") and seen.statements[-1] == "COMMIT", seen.statements
    inserts = [s.split(" (")[0].replace("`", '"') for s in seen.matching("INSERT INTO")]
    assert inserts[:2] == ['INSERT INTO "articles"', 'INSERT INTO "article_bodies"'], seen.statements
    assert len(inserts) == 4, seen.statements  # then the search document and its terms' postings
    assert not [s for s in seen.statements if "article_tags" in s]
    edited = store.reads.published_article("alice", "a7")
    assert edited is not None and edited.content == "edited" and edited.tags == ("t",)


def test_an_edit_that_changes_tags_rewrites_them_in_one_transaction(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    apply_as_worker(store, user.id, [article("a", tags=("t",))], [], T0)
    index = store.reconcile.load_index(user.id)

    with count_statements(store.db) as seen:
        store.reconcile.apply(user.id, [article("a", tags=("t", "u"))], [], at(1), index=index)

    assert seen.statements[0].startswith("BEGIN") and seen.statements[-1] == "COMMIT"
    found = store.reads.published_article("alice", "a")
    assert found is not None and found.tags == ("t", "u")


def test_huge_batches_add_only_one_statement_per_chunk(store: PeeweeStore) -> None:
    small_user = store.users.add_user("small", "s@example.com", 1)
    big_user = store.users.add_user("big", "b@example.com", 2)
    count = CHUNK_SIZE * 2 + 1  # three chunks

    small = apply_new(store, small_user.id, 10)
    big = apply_new(store, big_user.id, count)

    inserts = [s for s in big.matching("INSERT") if "articles" in s.split("(")[0]]
    bodies = [s for s in big.matching("INSERT") if "article_bodies" in s.split("(")[0]]
    assert len(inserts) == 3 and len(bodies) == 3
    # The two extra article INSERTs and the two extra body INSERTs, nothing else (the new articles'
    # ids are read back in one SELECT for both).
    assert big.count - small.count == 4


@pytest.mark.mysql
@pytest.mark.parametrize("count", [1, 300])
def test_on_mysql_a_whole_reconcile_write_is_three_round_trips(mysql_store: PeeweeStore, count: int) -> None:
    # GIVEN articles synced, and the index read under the user's lock (as the worker does)
    store = mysql_store
    user = store.users.add_user("alice", "a@example.com", 1)
    apply_as_worker(
        store, user.id, [article(f"a{i}", tags=("t",)) for i in range(count)] + [article("old")], [], T0
    )
    index = store.reconcile.load_index(user.id)

    # WHEN the push edits every article, changes all their tags and deletes one
    changed = [article(f"a{i}", body="edited", tags=("t", f"u/{i % 3}")) for i in range(count)]
    with count_statements(store.db) as seen:
        result = store.reconcile.apply(user.id, changed, ["old"], at(1), index=index)

    # THEN BEGIN ... COMMIT, every statement of it, reached the server in three round trips whatever
    # the count: the search index's two reads (the articles' numbers and terms, then the postings
    # those terms touch) each send what is queued before them, and the rest goes with the COMMIT
    assert (result.written, result.archived) == (count, 1)
    assert seen.round_trips == 3, seen.statements
    assert seen.statements[0] == "BEGIN" and seen.statements[-1] == "COMMIT"
    edited = store.reads.published_article("alice", "a0")
    assert edited is not None and edited.content == "edited" and edited.tags == ("t", "u/0")
    archived = store.reconcile.load_index(user.id)["old"]
    assert archived.archived


@pytest.mark.mysql
def test_on_mysql_the_index_read_and_the_write_are_four_round_trips(mysql_store: PeeweeStore) -> None:
    # GIVEN an article synced
    store = mysql_store
    user = store.users.add_user("alice", "a@example.com", 1)
    apply_as_worker(store, user.id, [article("a", tags=("t",))], [], T0)

    # WHEN the worker reads the index (under the user's lock) and writes an edit that changes the tags
    with count_statements(store.db) as seen:
        index = store.reconcile.load_index(user.id)
        store.reconcile.apply(user.id, [article("a", body="edited", tags=("u",))], [], at(1), index=index)

    # THEN one round trip reads, three write (two of them read the search index's rows the edit
    # rewrites), and no row is read again under lock
    assert seen.round_trips == 4, seen.statements
    assert not any("FOR UPDATE" in s for s in seen.statements)
    found = store.reads.published_article("alice", "a")
    assert found is not None and found.tags == ("u",)
