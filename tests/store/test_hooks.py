"""The outgoing webhooks' tables, on SQLite and MariaDB: endpoints, queueing with merges, the send
lease, attempts and health."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.hook_records import EndpointRecord, NewAttempt
from function.store.hooks import HookStore
from function.store.schema import create_tables
from tests.kit.builders import T0, at
from tests.kit.lock_waits import wait_until_blocked

SECRET = "whsec_" + "A" * 43 + "="


def merge(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, Any]:
    return {"slugs": [*older["slugs"], *newer["slugs"]]}


@pytest.fixture
def hooks(store: PeeweeStore) -> HookStore:
    return HookStore(store.db)


@pytest.fixture
def endpoint(store: PeeweeStore, hooks: HookStore) -> EndpointRecord:
    user = store.users.add_user("alice", "alice@example.com", 101, "alice/blog")
    return hooks.add_endpoint(user.id, "https://hooks.example.com/in", ["articles.changed"], SECRET, T0)


def attempt(event_id: str, endpoint_id: str, *, ok: bool, when: float = 1) -> NewAttempt:
    return NewAttempt(
        event_id,
        endpoint_id,
        "msg_1",
        1,
        at(when),
        200 if ok else 500,
        ok,
        None if ok else "HTTP 500",
        12.5,
        "x",
    )


def test_an_endpoint_is_listed_with_its_user_and_removed_with_its_events(
    store: PeeweeStore, hooks: HookStore, endpoint: EndpointRecord
) -> None:
    event = hooks.queue(endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1")
    assert event is not None
    hooks.finish_attempt(attempt(event.id, endpoint.id, ok=True), revision=1, retry_at=None, now=at(2))

    listed = hooks.endpoints()
    assert [(e.id, e.user_name, e.url, e.events) for e in listed] == [
        (endpoint.id, "alice", "https://hooks.example.com/in", ("articles.changed",))
    ]
    assert hooks.remove_endpoint(endpoint.id) is True
    assert hooks.endpoints() == [] and hooks.event(event.id) is None and hooks.attempts() == []
    assert hooks.remove_endpoint(endpoint.id) is False


def test_a_rotated_secret_keeps_the_old_one_for_its_grace_period(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    new = "whsec_" + "B" * 43 + "="
    rotated = hooks.rotate_secret(endpoint.id, new, previous_until=T0 + timedelta(hours=24))

    assert rotated is not None
    assert rotated.secrets_at(T0 + timedelta(hours=23)) == [new, SECRET]
    assert rotated.secrets_at(T0 + timedelta(hours=24)) == [new]
    assert hooks.rotate_secret("ep_unknown", new, T0) is None


def test_a_change_queued_while_an_event_is_pending_or_being_sent_is_merged_into_it(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    first = hooks.queue(
        endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1", merge=merge
    )
    assert first is not None and first.state == "pending" and first.next_attempt_at == at(1)
    hooks.mark_sending(first.id)

    second = hooks.queue(
        endpoint.id, "articles.changed", {"slugs": ["b"]}, at(2), message_id="msg_2", merge=merge
    )

    assert second is not None and second.id == first.id
    assert (second.data, second.message_id, second.revision) == ({"slugs": ["a", "b"]}, "msg_2", 2)
    assert second.updated_at == at(2)


def test_a_change_after_a_delivery_makes_a_new_event(hooks: HookStore, endpoint: EndpointRecord) -> None:
    first = hooks.queue(
        endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1", merge=merge
    )
    assert first is not None
    hooks.finish_attempt(attempt(first.id, endpoint.id, ok=True), revision=1, retry_at=None, now=at(2))

    second = hooks.queue(
        endpoint.id, "articles.changed", {"slugs": ["b"]}, at(3), message_id="msg_2", merge=merge
    )

    assert second is not None and second.id != first.id and second.data == {"slugs": ["b"]}
    delivered = hooks.event(first.id)
    assert delivered is not None and delivered.state == "delivered" and delivered.delivered_at == at(2)


def test_a_delivery_of_an_event_merged_meanwhile_leaves_it_due_again(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    event = hooks.queue(
        endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1", merge=merge
    )
    assert event is not None
    hooks.mark_sending(event.id)
    hooks.queue(endpoint.id, "articles.changed", {"slugs": ["b"]}, at(2), message_id="msg_2", merge=merge)

    state = hooks.finish_attempt(
        attempt(event.id, endpoint.id, ok=True), revision=1, retry_at=None, now=at(3)
    )

    assert state == "pending"
    due = hooks.next_due(endpoint.id, at(3))
    assert due is not None and due.id == event.id and due.data == {"slugs": ["a", "b"]}


def test_a_failed_attempt_waits_for_its_retry_and_the_last_one_fails_the_event(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    event = hooks.queue(endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1")
    assert event is not None

    assert hooks.finish_attempt(
        attempt(event.id, endpoint.id, ok=False), revision=1, retry_at=at(60), now=at(2)
    ) == ("pending")
    assert hooks.next_due(endpoint.id, at(59)) is None
    due = hooks.next_due(endpoint.id, at(60))
    assert due is not None and due.attempts == 1
    assert hooks.finish_attempt(
        attempt(event.id, endpoint.id, ok=False), revision=1, retry_at=None, now=at(61)
    ) == ("failed")
    assert hooks.next_due(endpoint.id, at(10_000)) is None
    assert [a.ok for a in hooks.attempts(endpoint.id)] == [False, False]


def test_one_sender_at_a_time_holds_the_lease_until_it_expires(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    assert hooks.claim(endpoint.id, at(0), at(900)) is True
    assert hooks.claim(endpoint.id, at(1), at(901)) is False
    hooks.release(endpoint.id, at(901))  # not the holder's lease: nothing released
    assert hooks.claim(endpoint.id, at(2), at(902)) is False
    assert hooks.claim(endpoint.id, at(900.5), at(1800)) is True  # the first one's lease ran out
    hooks.release(endpoint.id, at(1800))
    assert hooks.claim(endpoint.id, at(901), at(1801)) is True


def test_a_disabled_endpoint_cannot_be_claimed_and_is_not_due_until_it_is_healthy_again(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    hooks.queue(endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1")
    assert hooks.mark_failing(endpoint.id, at(2)) == at(2)
    assert hooks.mark_failing(endpoint.id, at(3)) == at(2)  # since the first failure
    assert hooks.disable(endpoint.id, at(4), "failing for 3 days") is True
    assert hooks.disable(endpoint.id, at(5), "again") is False

    assert hooks.claim(endpoint.id, at(6), at(906)) is False
    assert hooks.due_endpoints(at(6)) == []
    hooks.mark_healthy(endpoint.id)
    assert hooks.due_endpoints(at(6)) == [endpoint.id]
    healthy = hooks.endpoint(endpoint.id)
    assert healthy is not None and healthy.failing_since is None and healthy.disabled_at is None


def test_an_event_left_sending_by_a_sender_that_died_is_due_for_the_next_one(
    hooks: HookStore, endpoint: EndpointRecord
) -> None:
    event = hooks.queue(endpoint.id, "articles.changed", {"slugs": ["a"]}, at(1), message_id="msg_1")
    assert event is not None
    hooks.mark_sending(event.id)
    due = hooks.next_due(endpoint.id, at(1))
    assert due is not None and due.id == event.id and due.state == "sending"


def test_concurrent_changes_for_one_endpoint_end_in_one_event(db_url: str, endpoint: EndpointRecord) -> None:
    # GIVEN two processes (each its own connection) queueing changes for one endpoint at once
    def queue_many(prefix: str) -> None:
        db = open_database(db_url)
        with connection(db):
            for i in range(10):
                data = {"slugs": [f"{prefix}{i}"]}
                HookStore(db).queue(
                    endpoint.id, "articles.changed", data, at(i), message_id=f"m{prefix}{i}", merge=merge
                )
        db.close()

    threads = [threading.Thread(target=queue_many, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # THEN one pending event holds all twenty changes, each once
    db = open_database(db_url)
    with connection(db):
        hooks = HookStore(db)
        due = hooks.next_due(endpoint.id, at(100))
        assert hooks.live_events(endpoint.id) == 1
    assert due is not None and due.revision == 20
    assert sorted(due.data["slugs"]) == sorted(f"{p}{i}" for p in "ab" for i in range(10))


@pytest.mark.mysql
def test_two_syncs_ending_together_merge_into_one_event_when_reads_see_the_snapshot_of_begin(
    tidb_url: str,
) -> None:
    # GIVEN an endpoint on a database that reads as TiDB does (a plain SELECT in a transaction sees
    # what was committed before it began), and a session holding the endpoint's row for a moment
    db = open_database(tidb_url)
    with connection(db):
        create_tables(db)
        user = PeeweeStore(db).users.add_user("alice", "alice@example.com", 101, "alice/blog")
        endpoint = HookStore(db).add_endpoint(
            user.id, "https://hooks.example.com/in", ["articles.changed"], SECRET, T0
        )
    holder = open_database(tidb_url)
    holder.connect()
    holder.execute_sql("BEGIN")
    holder.execute_sql("UPDATE hook_endpoints SET queued_at = queued_at WHERE id = %s", (endpoint.id,))

    # WHEN two syncs end together: both begin while the row is held, then take turns on it
    def queue(slug: str) -> None:
        own = open_database(tidb_url)
        with connection(own):
            HookStore(own).queue(
                endpoint.id, "articles.changed", {"slugs": [slug]}, at(1), message_id=f"m-{slug}", merge=merge
            )
        own.close()

    threads = [threading.Thread(target=queue, args=(slug,)) for slug in ("a", "b")]
    for thread in threads:
        thread.start()
    wait_until_blocked(tidb_url, "UPDATE `hook_endpoints`", 2)
    holder.execute_sql("COMMIT")
    holder.close()
    for thread in threads:
        thread.join()

    # THEN the front end is told once, of both changes
    with connection(db):
        hooks = HookStore(db)
        assert hooks.live_events(endpoint.id) == 1
        due = hooks.next_due(endpoint.id, at(100))
    db.close()
    assert due is not None and due.revision == 2 and sorted(due.data["slugs"]) == ["a", "b"]
