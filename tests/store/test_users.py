"""Users: registration, look-ups by name and by App installation."""

from __future__ import annotations

import pytest

from function.errors import UnknownUser, UserExists
from function.store.facade import PeeweeStore


def test_added_user_can_be_found_by_name_and_installation(store: PeeweeStore) -> None:
    added = store.users.add_user("alice", "alice@example.com", 101, "alice/blog")

    assert store.users.get_user("alice") == added
    assert store.users.find_user_by_installation(101) == added
    assert added.repository == "alice/blog"


def test_unknown_user_and_installation_are_none(store: PeeweeStore) -> None:
    assert store.users.get_user("nobody") is None
    assert store.users.find_user_by_installation(999) is None


def test_duplicate_name_is_refused(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1)
    with pytest.raises(UserExists):
        store.users.add_user("alice", "other@example.com", 2)


def test_installation_belongs_to_one_user(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1)
    with pytest.raises(UserExists):
        store.users.add_user("bob", "b@example.com", 1)


def test_many_users_may_have_no_installation(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", None)
    store.users.add_user("bob", "b@example.com", None)
    assert [u.name for u in store.users.list_users()] == ["alice", "bob"]


def test_names_are_case_exact(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1)
    store.users.add_user("Alice", "A@example.com", 2)
    assert store.users.get_user("ALICE") is None
    found = store.users.get_user("Alice")
    assert found is not None and found.installation_id == 2


def test_list_users_is_sorted_by_name(store: PeeweeStore) -> None:
    for name in ("carol", "alice", "bob"):
        store.users.add_user(name, f"{name}@example.com", None)
    assert [u.name for u in store.users.list_users()] == ["alice", "bob", "carol"]


def test_set_installation_moves_the_user(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1)

    updated = store.users.set_installation("alice", 7)

    assert updated.installation_id == 7
    assert store.users.find_user_by_installation(1) is None
    assert store.users.find_user_by_installation(7) == updated
    assert store.users.set_installation("alice", 7) == updated  # setting it again is fine


def test_set_installation_of_unknown_user_fails(store: PeeweeStore) -> None:
    with pytest.raises(UnknownUser):
        store.users.set_installation("nobody", 1)


def test_set_installation_taken_by_another_user_fails(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1)
    store.users.add_user("bob", "b@example.com", 2)
    with pytest.raises(UserExists):
        store.users.set_installation("bob", 1)
    bob = store.users.get_user("bob")
    assert bob is not None and bob.installation_id == 2


def test_set_repository(store: PeeweeStore) -> None:
    store.users.add_user("alice", "a@example.com", 1)
    store.users.set_repository("alice", "alice/articles")
    found = store.users.get_user("alice")
    assert found is not None and found.repository == "alice/articles"


def test_set_repository_forgets_the_pinned_id(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1, "alice/old")
    store.users.pin_repository(user.id, "alice/old", 77)

    updated = store.users.set_repository("alice", "alice/new")

    assert (updated.repository, updated.repository_id) == ("alice/new", None)


def test_pin_repository_never_replaces_what_is_stored(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    store.users.pin_repository(user.id, "alice/blog", 77)

    store.users.pin_repository(user.id, "alice/dotfiles", 99)

    found = store.users.get_user("alice")
    assert found is not None and (found.repository, found.repository_id) == ("alice/blog", 77)


def test_set_repository_of_an_unknown_user_raises(store: PeeweeStore) -> None:
    with pytest.raises(UnknownUser):
        store.users.set_repository("nobody", "a/b")
