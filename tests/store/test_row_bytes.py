"""What the database measures of the rows an archive rewrites (``reconcile.row_bytes``), on SQLite and
MariaDB: bytes, not characters, of every text column the row holds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


def test_each_row_is_measured_in_bytes_by_its_text_columns(store: PeeweeStore, user: UserRecord) -> None:
    # GIVEN two articles alike but for a description of 10,000 Japanese characters (30,000 bytes)
    short = article("short", body="Same body.")
    long = replace(article("long", body="Same body."), description="見" * 10_000)
    apply_as_worker(store, user.id, [long, short], [], T0)

    # WHEN their rows are measured (a slug that is not stored is left out)
    sizes = store.reconcile.row_bytes(user.id, ["long", "short", "missing"])

    # THEN the long one weighs its description's bytes more (not its 10,000 characters)
    assert set(sizes) == {"long", "short"}
    extra = len(long.description.encode()) - len(short.description.encode())  # type: ignore[union-attr]
    assert extra - 100 < sizes["long"] - sizes["short"] < extra + 100


def test_nothing_to_measure_is_no_statement(store: PeeweeStore, user: UserRecord) -> None:
    assert store.reconcile.row_bytes(user.id, []) == {}
