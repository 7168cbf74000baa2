"""The store is one object composed of parts on one session; each part's queries are the store's too."""

from __future__ import annotations

from function.store.facade import PeeweeStore
from function.store.records import Watermark
from tests.kit.builders import T0, apply_as_worker, article


def test_every_part_works_on_the_stores_one_session(store: PeeweeStore) -> None:
    parts = [store.users, store.locks, store.reconcile, store.deliveries, store.reads, store.hooks]
    parts += [store.hooks.endpoint_queries, store.sweep_state()]
    assert all(part._session is store.session for part in parts)
    assert all(part.db is store.db for part in parts)


def test_a_part_and_the_store_answer_the_same_query_alike(store: PeeweeStore) -> None:
    # GIVEN a user added through the users part and an article written through the store
    user = store.users.add_user("alice", "a@example.com", 7, "alice/blog")
    apply_as_worker(store, user.id, [article("hello")], [], T0)

    # THEN the store's own names reach the same rows as the parts'
    assert store.get_user("alice") == store.users.get_user("alice") == user
    assert store.find_user_by_installation(7) == user
    assert store.published_article("alice", "hello") == store.reads.published_article("alice", "hello")
    assert set(store.load_index(user.id)) == set(store.reconcile.load_index(user.id)) == {"hello"}


def test_the_sweep_state_and_the_webhooks_are_parts_of_the_store(store: PeeweeStore) -> None:
    user = store.add_user("alice", "a@example.com", 7)

    # WHEN the sweep's watermark and an endpoint are saved through the store
    mark = Watermark(delivery_id=42, delivered_at=T0, run_at=T0)
    store.sweep_state().save(mark)
    endpoint = store.hooks.add_endpoint(user.id, "https://front.example/hook", ["articles.changed"], "s", T0)

    # THEN they read back through the same store, and a sweep of another name is apart
    assert store.sweep_state().load() == mark
    assert store.sweep_state("another").load() is None
    assert store.hooks.endpoint(endpoint.id) == store.hooks.endpoint_queries.endpoint(endpoint.id)
