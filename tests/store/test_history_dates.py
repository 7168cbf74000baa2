"""Dates from history set once, on SQLite and MariaDB: the first sync's stand-ins are replaced, a date
already served never moves, and a second import changes nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at

HISTORY = {
    "first": datetime(2019, 1, 2, 3, 4, 5),
    "second": datetime(2020, 6, 7, 8, 9, 10),
    "third": datetime(2021, 11, 12, 13, 14, 15),
}


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


def dates_of(store: PeeweeStore, user: UserRecord) -> dict[str, datetime | None]:
    return {slug: stored.published_at for slug, stored in store.reconcile.load_index(user.id).items()}


def test_the_first_syncs_stand_in_dates_take_their_history(store: PeeweeStore, user: UserRecord) -> None:
    # GIVEN a first sync that dated the whole backlog "now" (two transactions, a second apart)
    apply_as_worker(store, user.id, [article("first"), article("second")], [], T0)
    apply_as_worker(store, user.id, [article("third")], [], at(1))
    before = store.reconcile.load_index(user.id)

    result = store.dates.import_history_dates(user.id, HISTORY)

    assert dates_of(store, user) == HISTORY
    assert result.dated == {
        "first": (T0, HISTORY["first"]),
        "second": (T0, HISTORY["second"]),
        "third": (at(1), HISTORY["third"]),
    }
    # The content did not change: updatedAt stays.
    after = store.reconcile.load_index(user.id)
    assert {s: a.updated_at for s, a in after.items()} == {s: b.updated_at for s, b in before.items()}


def test_a_second_import_changes_nothing(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("first"), article("second")], [], T0)
    store.dates.import_history_dates(user.id, HISTORY)

    again = store.dates.import_history_dates(user.id, {**HISTORY, "first": datetime(2000, 1, 1)})

    assert again.dated == {}
    assert sorted(again.kept) == ["first", "second"]
    assert dates_of(store, user) == {"first": HISTORY["first"], "second": HISTORY["second"]}


def test_dates_of_their_own_are_never_moved(store: PeeweeStore, user: UserRecord) -> None:
    # GIVEN in the first sync: a front matter date, a file-name date, and a date from a folder's history
    front_matter = replace(article("first"), published_at=datetime(2018, 5, 5))
    file_name = replace(article("second"), slug_date=datetime(2017, 4, 4))
    from_history = replace(article("third"), added_at=datetime(2016, 3, 3))
    apply_as_worker(store, user.id, [front_matter, file_name, from_history], [], T0)

    result = store.dates.import_history_dates(user.id, HISTORY)

    assert result.dated == {}
    assert sorted(result.kept) == ["first", "second", "third"]
    assert dates_of(store, user) == {
        "first": datetime(2018, 5, 5),
        "second": datetime(2017, 4, 4),
        "third": datetime(2016, 3, 3),
    }


def test_an_article_published_after_the_first_sync_keeps_the_moment_readers_saw_it(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article("first")], [], T0)
    apply_as_worker(store, user.id, [article("second")], [], T0 + timedelta(days=3))

    result = store.dates.import_history_dates(user.id, HISTORY)

    assert list(result.dated) == ["first"]
    assert result.kept == ["second"]
    assert dates_of(store, user)["second"] == T0 + timedelta(days=3)


def test_a_draft_gets_no_date_and_is_dated_when_first_published(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("first"), article("second", publish=False)], [], T0)

    result = store.dates.import_history_dates(user.id, HISTORY)

    assert result.drafts == ["second"]
    assert dates_of(store, user)["second"] is None
    # Published two days later: readers see it appear then.
    later = T0 + timedelta(days=2)
    apply_as_worker(store, user.id, [article("second", body="now published")], [], later)
    assert dates_of(store, user)["second"] == later


def test_an_archived_stand_in_is_dated_too_for_when_its_file_comes_back(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article("first"), article("second")], [], T0)
    apply_as_worker(store, user.id, [article("first")], ["second"], at(5))

    store.dates.import_history_dates(user.id, HISTORY)

    assert dates_of(store, user)["second"] == HISTORY["second"]


def test_what_the_history_and_the_database_do_not_share_is_reported(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article("first"), article("local-only")], [], T0)

    result = store.dates.import_history_dates(user.id, HISTORY)

    assert result.not_in_history == ["local-only"]
    assert result.not_synced == ["second", "third"]
    assert dates_of(store, user)["local-only"] == T0


def test_before_any_sync_nothing_is_dated_and_everything_is_not_synced(
    store: PeeweeStore, user: UserRecord
) -> None:
    result = store.dates.import_history_dates(user.id, HISTORY)

    assert (result.dated, result.not_synced) == ({}, ["first", "second", "third"])


def test_a_large_backlog_is_dated_in_bounded_statements(store: PeeweeStore, user: UserRecord) -> None:
    slugs = [f"a{i:05d}" for i in range(3000)]
    apply_as_worker(store, user.id, [article(slug) for slug in slugs], [], T0)
    history = {slug: datetime(2020, 1, 1) + timedelta(hours=i) for i, slug in enumerate(slugs)}

    result = store.dates.import_history_dates(user.id, history)

    assert len(result.dated) == 3000
    assert dates_of(store, user) == history
