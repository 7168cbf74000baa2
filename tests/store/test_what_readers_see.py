"""What a reconcile write changes for readers (published, updated, unpublished slugs), on SQLite and
MariaDB: the outgoing webhooks tell front ends exactly these."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from function.store.facade import PeeweeStore
from function.store.records import ApplyResult, UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at, moved


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


def seen(result: ApplyResult) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    return result.published, result.updated, result.unpublished


def test_a_new_published_article_is_published_and_a_new_draft_is_nothing(
    store: PeeweeStore, user: UserRecord
) -> None:
    index = store.reconcile.load_index(user.id)
    result = store.reconcile.apply(
        user.id, [article("hello"), article("draft", publish=False)], [], T0, index=index
    )
    assert seen(result) == (("hello",), (), ())


def test_an_edited_article_is_updated_and_an_unchanged_one_is_not(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article("edited"), article("same")], [], T0)
    index = store.reconcile.load_index(user.id)

    result = store.reconcile.apply(
        user.id,
        [article("edited", body="Changed."), moved(article("same"), blob_sha="f" * 40)],
        [],
        at(60),
        index=index,
    )

    assert seen(result) == ((), ("edited",), ())


def test_publishing_a_draft_and_unpublishing_an_article(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("was-draft", publish=False), article("was-live")], [], T0)
    index = store.reconcile.load_index(user.id)

    result = store.reconcile.apply(
        user.id,
        [article("was-draft"), article("was-live", publish=False)],
        [],
        at(60),
        index=index,
    )

    assert seen(result) == (("was-draft",), (), ("was-live",))


def test_editing_a_draft_changes_nothing_readers_see(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("draft", publish=False)], [], T0)
    result = apply_as_worker(store, user.id, [article("draft", publish=False, body="More.")], [], at(60))
    assert result.written == 1
    assert seen(result) == ((), (), ())


def test_archiving_a_published_article_unpublishes_it_but_a_draft_is_nothing(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(
        store, user.id, [article("live"), article("draft", publish=False), article("kept")], [], T0
    )
    index = store.reconcile.load_index(user.id)

    result = store.reconcile.apply(user.id, [article("kept")], ["live", "draft"], at(60), index=index)

    assert result.archived == 2
    assert seen(result) == ((), (), ("live",))


def test_an_article_scheduled_for_later_is_not_published_yet(store: PeeweeStore, user: UserRecord) -> None:
    later = replace(article("soon"), published_at=T0 + timedelta(days=1))
    result = apply_as_worker(store, user.id, [later], [], T0)
    assert result.written == 1
    assert seen(result) == ((), (), ())


def test_an_archived_article_that_comes_back_is_published(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("back"), article("other")], [], T0)
    store.reconcile.apply(
        user.id, [article("other")], ["back"], at(10), index=store.reconcile.load_index(user.id)
    )

    result = store.reconcile.apply(
        user.id, [article("back")], [], at(20), index=store.reconcile.load_index(user.id)
    )

    assert seen(result) == (("back",), (), ())
