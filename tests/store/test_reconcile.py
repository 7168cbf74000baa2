"""The reconcile write (``apply``) and its index read, on SQLite and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from function.store.write_plan import tags_hash
from tests.kit.builders import T0, apply_as_worker, article, at, moved
from tests.kit.statements import count_statements


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


def tags_of(store: PeeweeStore, user_name: str, slug: str) -> tuple[str, ...] | None:
    view = store.reads.published_article(user_name, slug)
    return view.tags if view else None


def test_new_article_gets_created_updated_and_published_at_now(store: PeeweeStore, user: UserRecord) -> None:
    result = apply_as_worker(store, user.id, [article("hello")], [], T0)

    stored = store.reconcile.load_index(user.id)["hello"]
    assert (result.written, result.unchanged, result.archived) == (1, 0, 0)
    assert stored.created_at == stored.updated_at == T0
    assert stored.published_at == T0
    assert stored.archived is False


def test_timestamps_keep_microseconds(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a")], [], at(0.000001))
    assert store.reconcile.load_index(user.id)["a"].updated_at == at(0.000001)


def test_aware_now_is_stored_as_naive_utc(store: PeeweeStore, user: UserRecord) -> None:
    tokyo = timezone(timedelta(hours=9))
    apply_as_worker(store, user.id, [article("a")], [], T0.replace(tzinfo=UTC).astimezone(tokyo))
    assert store.reconcile.load_index(user.id)["a"].created_at == T0


def test_draft_has_no_published_at(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("draft", publish=False)], [], T0)
    assert store.reconcile.load_index(user.id)["draft"].published_at is None


def test_same_content_under_new_blob_keeps_updated_at(store: PeeweeStore, user: UserRecord) -> None:
    first = article("a")
    apply_as_worker(store, user.id, [first], [], T0)

    result = apply_as_worker(store, user.id, [moved(first, blob_sha="f" * 40)], [], at(60))

    stored = store.reconcile.load_index(user.id)["a"]
    assert (result.written, result.unchanged) == (0, 1)
    assert stored.updated_at == T0
    assert stored.blob_sha == "f" * 40


def test_changed_content_moves_updated_at_and_keeps_created_at(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", body="v1")], [], T0)

    result = apply_as_worker(store, user.id, [article("a", body="v2")], [], at(60))

    stored = store.reconcile.load_index(user.id)["a"]
    assert result.written == 1
    assert stored.updated_at == at(60)
    assert stored.created_at == T0
    view = store.reads.published_article("alice", "a")
    assert view is not None and view.content == "v2"


def test_metadata_change_moves_updated_at(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", title="Old")], [], T0)
    apply_as_worker(store, user.id, [article("a", title="New")], [], at(5))
    assert store.reconcile.load_index(user.id)["a"].updated_at == at(5)


def test_published_at_is_set_on_first_publish(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", publish=False)], [], T0)
    apply_as_worker(store, user.id, [article("a", publish=True)], [], at(10))
    assert store.reconcile.load_index(user.id)["a"].published_at == at(10)


def test_published_at_is_kept_after_unpublish_and_republish(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", publish=True)], [], T0)
    apply_as_worker(store, user.id, [article("a", publish=False)], [], at(10))
    assert store.reconcile.load_index(user.id)["a"].published_at == T0
    apply_as_worker(store, user.id, [article("a", publish=True, body="again")], [], at(20))
    assert store.reconcile.load_index(user.id)["a"].published_at == T0


def test_archive_hides_but_keeps_the_article(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)

    result = apply_as_worker(store, user.id, [], ["b"], at(30))

    stored = store.reconcile.load_index(user.id)["b"]
    assert result.archived == 1
    assert stored.archived is True
    assert stored.updated_at == T0  # archiving is not an edit
    assert store.reads.published_article("alice", "b") is None
    listed = store.reads.published_articles("alice")
    assert listed is not None and [v.slug for v in listed] == ["a"]


def test_archiving_twice_counts_once(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a")], [], T0)
    assert apply_as_worker(store, user.id, [], ["a"], at(1)).archived == 1
    assert apply_as_worker(store, user.id, [], ["a", "never-existed"], at(2)).archived == 0


def test_a_file_that_comes_back_is_unarchived(store: PeeweeStore, user: UserRecord) -> None:
    parsed = article("a")
    apply_as_worker(store, user.id, [parsed], [], T0)
    apply_as_worker(store, user.id, [], ["a"], at(10))

    result = apply_as_worker(store, user.id, [parsed], [], at(20))

    stored = store.reconcile.load_index(user.id)["a"]
    assert result.written == 1
    assert stored.archived is False
    assert stored.published_at == T0
    assert store.reads.published_article("alice", "a") is not None


def test_a_given_slug_is_never_archived_in_the_same_apply(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", body="v2")], ["a"], T0)
    assert store.reconcile.load_index(user.id)["a"].archived is False


def test_tags_are_replaced_when_the_article_changes(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", tags=("x", "y"))], [], T0)
    apply_as_worker(store, user.id, [article("a", tags=("y", "z/w"))], [], at(1))
    assert tags_of(store, "alice", "a") == ("y", "z/w")


def test_tags_of_an_unchanged_article_stay(store: PeeweeStore, user: UserRecord) -> None:
    parsed = article("a", tags=("x", "y"))
    apply_as_worker(store, user.id, [parsed], [], T0)
    apply_as_worker(store, user.id, [moved(parsed, blob_sha="e" * 40), article("b", tags=("x",))], [], at(1))
    assert tags_of(store, "alice", "a") == ("x", "y")
    assert tags_of(store, "alice", "b") == ("x",)


def test_all_tags_can_be_removed(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", tags=("x",))], [], T0)
    apply_as_worker(store, user.id, [article("a", tags=())], [], at(1))
    assert tags_of(store, "alice", "a") == ()


def test_slugs_differing_in_case_are_two_articles(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("Foo", body="upper"), article("foo", body="lower")], [], T0)
    assert set(store.reconcile.load_index(user.id)) == {"Foo", "foo"}
    upper = store.reads.published_article("alice", "Foo")
    assert upper is not None and upper.content == "upper"


def test_nothing_to_write_sends_no_statement(store: PeeweeStore, user: UserRecord) -> None:
    index = store.reconcile.load_index(user.id)
    with count_statements(store.db) as seen:
        result = store.reconcile.apply(user.id, [], [], T0, index=index)
    assert seen.count == 0
    assert (result.written, result.unchanged, result.archived) == (0, 0, 0)


def test_duplicate_slugs_are_refused(store: PeeweeStore, user: UserRecord) -> None:
    with pytest.raises(ValueError, match="same slug"):
        apply_as_worker(store, user.id, [article("a"), article("a", body="other")], [], T0)
    assert store.reconcile.load_index(user.id) == {}


def test_users_do_not_see_each_others_articles(store: PeeweeStore, user: UserRecord) -> None:
    bob = store.users.add_user("bob", "bob@example.com", 202)
    apply_as_worker(store, user.id, [article("a")], [], T0)
    apply_as_worker(store, bob.id, [article("a", body="bob's"), article("b")], [], T0)
    apply_as_worker(store, bob.id, [], ["a"], at(1))

    assert set(store.reconcile.load_index(user.id)) == {"a"}
    assert store.reconcile.load_index(user.id)["a"].archived is False
    mine = store.reads.published_article("alice", "a")
    assert mine is not None and mine.content == "Hello."


def test_load_index_is_one_select_without_content(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article(f"a{i}") for i in range(25)], [], T0)

    with count_statements(store.db) as seen:
        index = store.reconcile.load_index(user.id)

    assert len(index) == 25
    assert seen.count == 1
    sql = seen.statements[0].replace("`", '"')
    assert '"content"' not in sql and "content_html" not in sql


def test_updated_at_order_survives_subsecond_updates(store: PeeweeStore, user: UserRecord) -> None:
    # DATETIME without a fraction would make these two updates look simultaneous.
    apply_as_worker(store, user.id, [article("a", body="1")], [], datetime(2026, 1, 1, 0, 0, 0, 100))
    apply_as_worker(store, user.id, [article("a", body="2")], [], datetime(2026, 1, 1, 0, 0, 0, 900))
    assert store.reconcile.load_index(user.id)["a"].updated_at.microsecond == 900


def test_load_index_reads_back_every_field_as_written(store: PeeweeStore, user: UserRecord) -> None:
    # On MySQL the index comes back packed into one string per row: every field must survive it,
    # a path holding the separator, an unset published_at, a whole second and an archived flag included.
    whole_second = datetime(2026, 3, 1, 9, 30, 15)
    draft = article("draft", publish=False, tags=("b", "a"), path="articles/odd\tname.md")
    apply_as_worker(store, user.id, [draft, article("gone")], [], whole_second)
    apply_as_worker(store, user.id, [], ["gone"], at(1))

    index = store.reconcile.load_index(user.id)

    stored = index["draft"]
    assert stored.path == "articles/odd\tname.md"
    assert (stored.blob_sha, stored.content_hash) == (draft.blob_sha, draft.content_hash)
    assert stored.published_at is None
    assert stored.created_at == stored.updated_at == whole_second
    assert stored.archived is False
    assert stored.tags_hash == tags_hash(("a", "b"))
    assert isinstance(stored.id, int)
    gone = index["gone"]
    assert gone.archived is True
    assert gone.published_at == whole_second
    assert gone.id != stored.id
