"""The reconcile's cost does not grow with the number of articles (one more article INSERT per
CHUNK_SIZE given articles at most)."""

from __future__ import annotations

import pytest

from function.db import CHUNK_SIZE, StatementLog, count_statements
from function.store import PeeweeStore
from tests.store.builders import T0, article, at, moved


def apply_new(store: PeeweeStore, user_id: int, count: int) -> StatementLog:
    articles = [article(f"a{i}", tags=("t", f"t/{i % 7}")) for i in range(count)]
    with count_statements(store.db) as seen:
        store.apply(user_id, articles, [], "h", T0)
    return seen


def apply_changed(store: PeeweeStore, user_id: int, count: int) -> StatementLog:
    store.apply(user_id, [article(f"a{i}", tags=("t",)) for i in range(count)], [], "h1", T0)
    changed = [article(f"a{i}", body="edited", tags=("t", "u")) for i in range(count)]
    archive = [f"gone{i}" for i in range(count)]
    with count_statements(store.db) as seen:
        store.apply(user_id, changed, archive, "h2", at(1))
    return seen


@pytest.mark.parametrize("scenario", [apply_new, apply_changed])
def test_apply_costs_the_same_for_10_and_300_articles(store: PeeweeStore, scenario: object) -> None:
    small_user = store.add_user("small", "s@example.com", 1)
    big_user = store.add_user("big", "b@example.com", 2)

    small = scenario(store, small_user.id, 10)  # type: ignore[operator]
    big = scenario(store, big_user.id, 300)  # type: ignore[operator]

    assert small.count == big.count, (small.statements, big.statements)
    assert big.count <= 12
    assert big.statements[0].startswith("BEGIN") and big.statements[-1] == "COMMIT"


def test_unchanged_articles_cost_one_upsert(store: PeeweeStore) -> None:
    user = store.add_user("alice", "a@example.com", 1)
    parsed = [article(f"a{i}", tags=("t",)) for i in range(50)]
    store.apply(user.id, parsed, [], "h1", T0)

    with count_statements(store.db) as seen:
        result = store.apply(
            user.id, [moved(p, blob_sha=f"{i:040x}") for i, p in enumerate(parsed)], [], "h2", T0
        )

    assert result.unchanged == 50
    # BEGIN, SELECT existing, INSERT .. upsert, UPDATE users, COMMIT: no tag work for unchanged content.
    assert seen.count == 5, seen.statements


def test_huge_batches_add_only_one_statement_per_chunk(store: PeeweeStore) -> None:
    small_user = store.add_user("small", "s@example.com", 1)
    big_user = store.add_user("big", "b@example.com", 2)
    count = CHUNK_SIZE * 2 + 1  # three chunks

    small = apply_new(store, small_user.id, 10)
    big = apply_new(store, big_user.id, count)

    inserts = [s for s in big.matching("INSERT") if "articles" in s.split("(")[0]]
    assert len(inserts) == 3
    assert big.count - small.count == 2  # the two extra article INSERTs, nothing else
