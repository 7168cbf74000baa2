"""What the database measures of the rows an archive rewrites (``reconcile.row_bytes``), on SQLite and
MariaDB: bytes, not characters, every text column counted."""

from __future__ import annotations

import pytest

from function.store.batching import article_bytes
from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


def test_each_row_is_measured_in_bytes_with_its_markdown_and_html(
    store: PeeweeStore, user: UserRecord
) -> None:
    # GIVEN an article of 10,000 Japanese characters (30,000 bytes of Markdown and of HTML), a short one
    long, short = article("long", body="見" * 10_000), article("short", body="Hi.")
    apply_as_worker(store, user.id, [long, short], [], T0)

    # WHEN the rows are measured (a slug that is not stored is left out)
    sizes = store.reconcile.row_bytes(user.id, ["long", "short", "missing"])

    # THEN each counts its text in bytes, about what writing it cost, and nothing for a missing slug
    assert set(sizes) == {"long", "short"}
    assert 60_000 < sizes["long"] < 62_000
    assert sizes["short"] < 1_500
    assert abs(sizes["long"] - article_bytes(long)) < 1_000


def test_nothing_to_measure_is_no_statement(store: PeeweeStore, user: UserRecord) -> None:
    assert store.reconcile.row_bytes(user.id, []) == {}
