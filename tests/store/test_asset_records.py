"""The stored images' rows and the articles' references, on SQLite and MariaDB."""

from __future__ import annotations

from datetime import timedelta

import pytest

from function.store.asset_records import AssetRecords, StoredAsset
from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article
from tests.kit.statements import count_statements

KEY = "a" * 64 + ".png"


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


@pytest.fixture
def records(store: PeeweeStore) -> AssetRecords:
    return AssetRecords(store.db)


def _cat(path: str = "images/cat.png", blob: str = "1" * 40) -> StoredAsset:
    return StoredAsset(path, blob, KEY, "a" * 64, 68, "image/png")


def test_saved_rows_and_references_load_back(records: AssetRecords, user: UserRecord) -> None:
    refused = StoredAsset("images/big.png", "2" * 40, None, size=9_000_000, problem="too big")
    records.save(
        user.id, [_cat(), refused], {"pets": {"images/cat.png": "1" * 40, "images/gone.png": None}}, now=T0
    )
    assert records.load_assets(user.id) == {"images/cat.png": _cat(), "images/big.png": refused}
    assert records.load_references(user.id) == {"pets": {"images/cat.png": "1" * 40, "images/gone.png": None}}


def test_saving_a_path_again_replaces_its_row(records: AssetRecords, user: UserRecord) -> None:
    records.save(user.id, [_cat()], {}, now=T0)
    records.save(user.id, [_cat(blob="3" * 40)], {}, now=T0)
    assert records.load_assets(user.id)["images/cat.png"].blob_sha == "3" * 40


def test_gone_is_marked_once_and_cleared_when_the_path_is_saved_again(
    records: AssetRecords, user: UserRecord
) -> None:
    records.save(user.id, [_cat()], {}, now=T0)
    records.save(user.id, [], {}, gone=["images/cat.png"], now=T0 + timedelta(days=1))
    records.save(user.id, [], {}, gone=["images/cat.png"], now=T0 + timedelta(days=2))
    assert records.load_assets(user.id)["images/cat.png"].gone_at == T0 + timedelta(days=1)
    records.save(user.id, [_cat()], {}, now=T0 + timedelta(days=3))
    assert records.load_assets(user.id)["images/cat.png"].gone_at is None


def test_an_empty_reference_set_removes_the_articles_row(records: AssetRecords, user: UserRecord) -> None:
    records.save(user.id, [], {"pets": {"images/cat.png": "1" * 40}}, now=T0)
    records.save(user.id, [], {"pets": {}}, now=T0)
    assert records.load_references(user.id) == {}


def test_only_rows_gone_long_enough_and_pointed_at_by_no_live_article_are_collectable(
    store: PeeweeStore, records: AssetRecords, user: UserRecord
) -> None:
    # GIVEN three images gone from the repository a week ago; one still pointed at by a live article,
    # one by an archived article only, one by nobody
    apply_as_worker(store, user.id, [article("live"), article("old")], [], T0)
    apply_as_worker(store, user.id, [], ["old"], T0)
    rows = [_cat("images/live.png"), _cat("images/archived.png"), _cat("images/orphan.png")]
    refs = {"live": {"images/live.png": None}, "old": {"images/archived.png": None}}
    records.save(user.id, rows, refs, now=T0)
    records.save(user.id, [], {}, gone=[r.path for r in rows], now=T0)
    # THEN before the grace period nothing is collectable, after it only what no live article points at
    assert records.collectable(T0) == []
    collectable = records.collectable(T0 + timedelta(days=8))
    assert sorted(path for _, path, _ in collectable) == ["images/archived.png", "images/orphan.png"]


def test_a_key_is_in_use_while_any_row_stores_under_it(records: AssetRecords, user: UserRecord) -> None:
    records.save(user.id, [_cat("images/a.png"), _cat("images/b.png")], {}, now=T0)
    records.forget([(user.id, "images/a.png")])
    assert records.keys_in_use([KEY, "b" * 64 + ".png"]) == {KEY}
    records.forget([(user.id, "images/b.png")])
    assert records.keys_in_use([KEY]) == set()


def test_a_database_made_before_the_tables_existed_gets_them_on_first_use(
    store: PeeweeStore, user: UserRecord
) -> None:
    # GIVEN a database whose tables predate the images (as one made by an older version)
    store.db.execute_sql("DROP TABLE asset_references")
    store.db.execute_sql("DROP TABLE assets")
    # THEN the first sync's read finds nothing, and its write works
    records = AssetRecords(store.db)
    assert records.load(user.id) == ({}, {})
    records.save(user.id, [_cat()], {"pets": {"images/cat.png": "1" * 40}}, now=T0)
    assert AssetRecords(store.db).load(user.id) == (
        {"images/cat.png": _cat()},
        {"pets": {"images/cat.png": "1" * 40}},
    )


def test_one_statement_reads_the_rows_and_the_references(
    store: PeeweeStore, records: AssetRecords, user: UserRecord
) -> None:
    records.save(user.id, [_cat()], {"pets": {"images/cat.png": "1" * 40}}, now=T0)
    fresh = AssetRecords(store.db)
    with count_statements(store.db) as statements:
        fresh.load(user.id)
    assert statements.count == 1


def test_a_save_past_its_byte_bound_is_cut_into_transactions_that_each_hold_whole_rows(
    records: AssetRecords, user: UserRecord, store: PeeweeStore
) -> None:
    # GIVEN 40 images, each row a few hundred bytes, and a bound of about ten rows per transaction
    images = [_cat(path=f"images/cat{i:02}.png", blob=f"{i:040}") for i in range(40)]
    references = {f"post{i}": {f"images/cat{i:02}.png": f"{i:040}"} for i in range(40)}

    # WHEN they are saved with their references
    with count_statements(store.db) as log:
        records.save(user.id, images, references, now=T0, max_bytes=6_000)

    # THEN several transactions wrote them, and every row and reference is stored
    commits = len(log.matching("COMMIT"))
    assert 5 <= commits <= 40
    assert len(records.load_assets(user.id)) == 40
    assert records.load_references(user.id) == references
