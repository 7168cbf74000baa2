"""The deliveries table: one row per X-GitHub-Delivery, across redeliveries."""

from __future__ import annotations

import pytest

from function.store.facade import PeeweeStore
from function.store.models import ERROR_MAX_CHARS
from function.store.records import Outcome
from tests.kit.builders import T0, at
from tests.kit.statements import count_statements


def finish(store: PeeweeStore, delivery_id: str, **overrides: object) -> None:
    fields: dict[str, object] = {
        "head_sha": "abc",
        "processed": 3,
        "succeeded": 2,
        "failed": 1,
        "archived": 0,
        "outcome": "partial",
        "error": "articles/x.md: bad YAML",
        "now": at(5),
    }
    fields.update(overrides)
    store.deliveries.finish_delivery(delivery_id, **fields)  # type: ignore[arg-type]


def test_unknown_delivery_is_none(store: PeeweeStore) -> None:
    assert store.deliveries.get_delivery("nope") is None


def test_start_records_a_processing_delivery(store: PeeweeStore) -> None:
    store.deliveries.start_delivery("d-1", "push", 101, "alice/blog", T0, at(1))

    record = store.deliveries.get_delivery("d-1")
    assert record is not None
    assert (record.event, record.installation_id, record.repository) == ("push", 101, "alice/blog")
    assert (record.received_at, record.started_at, record.finished_at) == (T0, at(1), None)
    assert (record.outcome, record.attempts) == ("processing", 1)


def test_finish_records_counts_and_outcome(store: PeeweeStore) -> None:
    store.deliveries.start_delivery("d-1", "push", 101, "alice/blog", T0, at(1))

    finish(store, "d-1")

    record = store.deliveries.get_delivery("d-1")
    assert record is not None
    assert (record.processed, record.succeeded, record.failed, record.archived) == (3, 2, 1, 0)
    assert (record.outcome, record.error, record.head_sha) == ("partial", "articles/x.md: bad YAML", "abc")
    assert record.finished_at == at(5)


def test_retryable_is_a_value_of_its_own_and_a_restart_clears_it(store: PeeweeStore) -> None:
    # GIVEN a delivery that failed for a reason that may pass, and one whose only failure is broken
    store.deliveries.start_delivery("d-1", "push", 101, "alice/blog", T0, at(1))
    finish(store, "d-1", outcome="failed", error="articles/x.md: GitHub answered 502", retryable=True)
    store.deliveries.start_delivery("d-2", "push", 101, "alice/blog", T0, at(1))
    finish(store, "d-2")

    # THEN the records say so without any mark in their text, and the outcome is a value
    first, second = store.deliveries.get_delivery("d-1"), store.deliveries.get_delivery("d-2")
    assert first is not None and first.retryable and first.outcome is Outcome.FAILED
    assert second is not None and not second.retryable and second.outcome is Outcome.PARTIAL
    assert not Outcome.FAILED.complete and Outcome.PARTIAL.complete

    # WHEN the failed one is delivered again THEN its start forgets the old verdict
    store.deliveries.start_delivery("d-1", "push", 101, "alice/blog", at(100), at(101))
    again = store.deliveries.get_delivery("d-1")
    assert again is not None and not again.retryable and again.outcome is Outcome.PROCESSING


def test_redelivery_counts_an_attempt_and_restarts(store: PeeweeStore) -> None:
    store.deliveries.start_delivery("d-1", "push", 101, "alice/blog", T0, at(1))
    finish(store, "d-1", outcome="failed")

    store.deliveries.start_delivery("d-1", "push", 101, "alice/blog", at(100), at(101))
    again = store.deliveries.get_delivery("d-1")
    assert again is not None

    assert again.attempts == 2
    assert again.outcome == "processing"
    assert again.started_at == at(101)
    assert again.received_at == T0  # first receipt is kept
    assert again.finished_at is None and again.error is None


def test_error_is_truncated(store: PeeweeStore) -> None:
    store.deliveries.start_delivery("d-1", "push", None, None, T0, T0)
    finish(store, "d-1", error="x" * (ERROR_MAX_CHARS * 3), outcome="failed")
    record = store.deliveries.get_delivery("d-1")
    assert record is not None and record.error == "x" * ERROR_MAX_CHARS


def test_unknown_outcome_is_refused(store: PeeweeStore) -> None:
    store.deliveries.start_delivery("d-1", "push", None, None, T0, T0)
    with pytest.raises(ValueError, match="outcome"):
        finish(store, "d-1", outcome="done")


def test_recent_deliveries_newest_received_first(store: PeeweeStore) -> None:
    for n, seconds in enumerate([10, 30, 20]):
        store.deliveries.start_delivery(f"d-{n}", "push", None, None, at(seconds), at(seconds))
    assert [d.delivery_id for d in store.deliveries.recent_deliveries(10)] == ["d-1", "d-2", "d-0"]
    assert [d.delivery_id for d in store.deliveries.recent_deliveries(2)] == ["d-1", "d-2"]


def test_a_delivery_and_the_last_sync_of_its_repository_come_in_one_select(store: PeeweeStore) -> None:
    # GIVEN two syncs of alice/blog (the later one partial), a failed one after them, a sync of another
    # repository and a delivery still processing
    for number, (repository, outcome) in enumerate(
        [
            ("alice/blog", "success"),
            ("alice/blog", "partial"),
            ("alice/blog", "failed"),
            ("bob/blog", "success"),
        ]
    ):
        store.deliveries.start_delivery(f"d-{number}", "push", 101, repository, T0, at(number))
        finish(store, f"d-{number}", outcome=outcome, head_sha=f"head-{number}")
    store.deliveries.start_delivery("d-new", "push", 101, "alice/blog", T0, at(10))

    with count_statements(store.db) as seen:
        own, last = store.deliveries.delivery_and_last_sync("d-new", 101, "alice/blog")

    # THEN the delivery's own record and the latest sync that reached a head, as their own reads say
    assert seen.count == 1, seen.statements
    assert own == store.deliveries.get_delivery("d-new") and own is not None
    assert last == store.deliveries.last_sync(101, "alice/blog") and last is not None
    assert last.delivery_id == "d-1"
    # AND the latest sync asked for again by its own id is both; a delivery never seen, neither
    assert store.deliveries.delivery_and_last_sync("d-1", 101, "alice/blog") == (last, last)
    assert store.deliveries.delivery_and_last_sync("d-9", 101, "carol/blog") == (None, None)
    assert store.deliveries.delivery_and_last_sync("d-9", 202, "alice/blog") == (None, None)
