"""The store is one object composed of parts on one session; a query is reached through its part only."""

from __future__ import annotations

from function.store.facade import PeeweeStore
from function.store.records import Watermark
from tests.kit.builders import T0, apply_as_worker, article


def test_every_part_works_on_the_stores_one_session(store: PeeweeStore) -> None:
    parts = [store.users, store.locks, store.reconcile, store.deliveries, store.reads, store.hooks]
    parts += [store.books, store.book_reads, store.sweep_state()]
    assert all(part._session is store.session for part in parts)
    assert all(part.db is store.db for part in parts)


def test_a_query_has_one_name_its_parts(store: PeeweeStore) -> None:
    # GIVEN a user added through the users part and an article written as the worker writes it
    user = store.users.add_user("alice", "a@example.com", 7, "alice/blog")
    apply_as_worker(store, user.id, [article("hello")], [], T0)

    # THEN the parts read them back, and the store itself lends no query under a second name
    assert store.users.find_user_by_installation(7) == user
    assert set(store.reconcile.load_index(user.id)) == {"hello"}
    own = {name for name in dir(PeeweeStore) if not name.startswith("_")}
    assert own == {"db", "holds_server_locks", "sweep_state"}


def test_the_sweep_state_and_the_webhooks_are_parts_of_the_store(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 7)

    # WHEN the sweep's watermark and an endpoint are saved through the store
    mark = Watermark(delivery_id=42, delivered_at=T0, run_at=T0)
    store.sweep_state().save(mark)
    endpoint = store.hooks.add_endpoint(user.id, "https://front.example/hook", ["articles.changed"], "s", T0)

    # THEN they read back through the same store, and a sweep of another name is apart
    assert store.sweep_state().load() == mark
    assert store.sweep_state("another").load() is None
    assert store.hooks.endpoint(endpoint.id) == endpoint
