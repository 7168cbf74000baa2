"""Queueing and sending on SQLite and MariaDB, with a fake clock: every request verified with the
Standard Webhooks library; retries on 500, time-out, reset and 3xx; coalescing; rotation; disabling."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import jsonschema
import pytest
from standardwebhooks.webhooks import WebhookVerificationError

from function.hooks.backoff import RETRY_DELAYS
from function.hooks.dispatch import HookDispatcher
from function.hooks.schema import EVENT_SCHEMA
from function.hooks.signing import new_secret
from function.store.backends import open_database
from function.store.connection import connection
from function.store.hooks import HookStore
from tests.hooks.conftest import Hub
from tests.kit.webhook_receiver import (
    WebhookReceiver,
    answer,
    block,
    hang,
    redirect,
    reset,
    running,
    verify,
)


def test_a_change_makes_one_signed_request_to_each_endpoint(hub: Hub, receiver: WebhookReceiver) -> None:
    with running(WebhookReceiver()) as second:
        first_endpoint = hub.add(receiver.url("/a"))
        second_endpoint = hub.add(second.url("/b"))

        queued = hub.change("hello", updated=("older",))
        report = hub.dispatcher.deliver(queued)

        assert sorted(queued) == sorted([first_endpoint.id, second_endpoint.id])
        assert report.delivered == 2 and len(report.sent) == 2
        for got, endpoint in ((receiver, first_endpoint), (second, second_endpoint)):
            [request] = got.received
            body = verify(request, hub.secrets[endpoint.id])  # raises unless the signature verifies
            jsonschema.validate(body, EVENT_SCHEMA)
            assert body["type"] == "articles.changed"
            assert [a["slug"] for a in body["data"]["published"]] == ["hello"]
            assert body["data"]["updated"][0]["url"] == "https://blog.example.com/articles/older"
            assert body["data"]["user"] == "alice"


def test_nothing_is_queued_or_sent_for_a_sync_that_changed_nothing(
    hub: Hub, receiver: WebhookReceiver
) -> None:
    endpoint = hub.add(receiver.url())
    assert hub.change() == []
    assert hub.dispatcher.deliver([endpoint.id]).sent == []
    assert hub.dispatcher.deliver_due().sent == []
    assert receiver.received == []


def test_an_endpoint_gets_only_the_events_it_subscribed_to(hub: Hub, receiver: WebhookReceiver) -> None:
    hub.add(receiver.url(), events=("sync.failed",))
    assert hub.change("hello") == []
    queued = hub.dispatcher.queue_failure(
        hub.user.id, "alice", delivery="d-9", head_sha=None, reason="GitHub unavailable"
    )
    hub.dispatcher.deliver(queued)
    [request] = receiver.received
    assert verify(request, next(iter(hub.secrets.values())))["type"] == "sync.failed"


def test_a_failing_endpoint_is_retried_with_back_off_until_it_answers(
    hub: Hub, receiver: WebhookReceiver
) -> None:
    # GIVEN a receiver that answers 500, then hangs, resets the connection, redirects, and at last 200
    endpoint = hub.add(receiver.url())
    receiver.script = [answer(500), hang(3), reset(), redirect("http://127.0.0.1:9/elsewhere"), answer(204)]
    queued = hub.change("hello")

    # WHEN the push's invocation sends: the 500, the 5 s retry waited for in place, its time-out
    first = hub.dispatcher.deliver(queued)
    assert [s.answer.ok for s in first.sent] == [False, False]
    assert 4.0 <= hub.clock.slept[0] <= 6.0  # 5 s +- 20 %
    retry_at = first.sent[-1].retry_at
    assert retry_at is not None
    assert timedelta(seconds=48) <= retry_at - hub.clock.now() <= timedelta(seconds=72)

    # THEN nothing is sent before the retry is due; the sweeps send each retry when it is due
    assert hub.dispatcher.deliver_due().sent == []
    outcomes = []
    for delay in RETRY_DELAYS[1:4]:
        hub.clock.advance(delay * 1.21)
        outcomes += [(s.answer.describe(), s.state) for s in hub.dispatcher.deliver_due().sent]

    assert outcomes == [
        ("connection reset", "pending"),
        ("HTTP 302: redirect not followed", "pending"),
        ("HTTP 204", "delivered"),
    ]
    # AND every request carried the same message id, each signed for its own attempt
    requests = receiver.received
    assert len(requests) == 5
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    verify(requests[-1], hub.secrets[endpoint.id])
    recorded = hub.hooks.attempts(endpoint.id)
    assert [a.number for a in recorded] == [5, 4, 3, 2, 1]
    assert [a.status_code for a in recorded] == [204, 302, None, None, 500]
    assert recorded[3].error is not None and "timed out" in recorded[3].error
    assert all(a.duration_ms >= 0 for a in recorded)


def test_after_seven_attempts_over_about_a_day_the_event_fails(hub: Hub, receiver: WebhookReceiver) -> None:
    hub.add(receiver.url())
    receiver.then = answer(503, b"x" * 4000)
    start = hub.clock.now()
    hub.dispatcher.deliver(hub.change("hello"))
    for delay in RETRY_DELAYS[1:]:
        hub.clock.advance(delay * 1.21)
        hub.dispatcher.deliver_due()
    hub.clock.advance(timedelta(days=1))

    assert hub.dispatcher.deliver_due().sent == []
    attempts = hub.hooks.attempts()
    assert len(attempts) == 7 == len(receiver.received)
    assert attempts[0].answer == "x" * 1024  # the first kilobyte of the answer is kept
    event = hub.hooks.event(attempts[0].event_id)
    assert event is not None and event.state == "failed"
    assert timedelta(hours=15) < attempts[0].attempted_at - start < timedelta(hours=24)


def test_a_burst_of_changes_while_a_retry_is_pending_sends_one_request(
    hub: Hub, receiver: WebhookReceiver
) -> None:
    # GIVEN an endpoint down: the first attempt and its 5 s retry failed, the next is a minute away
    endpoint = hub.add(receiver.url())
    receiver.script = [answer(500), answer(500)]
    hub.dispatcher.deliver(hub.change("first"))
    assert len(receiver.received) == 2

    # WHEN five more pushes change articles meanwhile (each invocation tries to send)
    for i in range(5):
        queued = hub.change(f"burst-{i}", source=f"d-{i}")
        assert queued == [endpoint.id]
        assert hub.dispatcher.deliver(queued).sent == []  # not due yet: merged, waiting

    # THEN the retry is one request carrying all six changes
    hub.clock.advance(timedelta(minutes=2))
    report = hub.dispatcher.deliver_due()
    assert report.delivered == 1 and len(receiver.received) == 3
    body = verify(receiver.received[-1], hub.secrets[endpoint.id])
    assert sorted(a["slug"] for a in body["data"]["published"]) == [
        "burst-0",
        "burst-1",
        "burst-2",
        "burst-3",
        "burst-4",
        "first",
    ]
    assert hub.hooks.live_events(endpoint.id) == 0


def test_a_change_during_an_attempt_is_sent_right_after_it(
    hub: Hub, receiver: WebhookReceiver, db_url: str
) -> None:
    # GIVEN an attempt in flight (the receiver holds it)
    endpoint = hub.add(receiver.url())
    release = threading.Event()
    receiver.script = [block(release)]
    hub.change("first")
    sender = threading.Thread(target=_deliver_in_own_connection, args=(hub, db_url, [endpoint.id]))
    sender.start()
    receiver.wait_for(1)

    # WHEN a push changes another article meanwhile: its invocation finds the endpoint busy
    queued = hub.change("second", source="d-2")
    assert hub.dispatcher.deliver(queued).sent == []
    release.set()
    sender.join(10)

    # THEN the sender that was busy sends the merged event next: two requests, the second with both
    requests = receiver.wait_for(2)
    assert len(requests) == 2
    second = verify(requests[1], hub.secrets[endpoint.id])
    assert sorted(a["slug"] for a in second["data"]["published"]) == ["first", "second"]
    assert requests[0].headers["webhook-id"] != requests[1].headers["webhook-id"]


def _deliver_in_own_connection(hub: Hub, db_url: str, endpoint_ids: list[str]) -> None:
    """Another invocation's sender: its own connection to the same database."""
    db = open_database(db_url)
    with connection(db):
        dispatcher = HookDispatcher(HookStore(db), hub.transport, timing=hub.timing)
        dispatcher.deliver(endpoint_ids)
    db.close()


def test_after_a_rotation_both_secrets_sign_for_24_hours(hub: Hub, receiver: WebhookReceiver) -> None:
    endpoint = hub.add(receiver.url())
    old = hub.secrets[endpoint.id]
    new = new_secret()
    hub.hooks.rotate_secret(endpoint.id, new, hub.clock.now() + timedelta(hours=24))

    hub.dispatcher.deliver(hub.change("during"))
    hub.clock.advance(timedelta(hours=24, seconds=1))
    hub.dispatcher.deliver(hub.change("after", source="d-2"))

    during, after = receiver.received
    verify(during, old)
    verify(during, new)
    assert len(during.headers["webhook-signature"].split()) == 2
    verify(after, new)
    with pytest.raises(WebhookVerificationError):
        verify(after, old)


def test_an_endpoint_failing_for_three_days_is_disabled_and_the_alarm_told(
    hub: Hub, receiver: WebhookReceiver
) -> None:
    # GIVEN an endpoint that answers 500 to everything, a push a day
    endpoint = hub.add(receiver.url("/deploy/SECRET-TOKEN"))
    receiver.then = answer(500)
    for day in range(4):
        hub.dispatcher.deliver(hub.change(f"day-{day}", source=f"d-{day}"))
        for delay in RETRY_DELAYS[1:]:
            hub.clock.advance(delay * 1.01)
            hub.dispatcher.deliver_due()
        hub.clock.advance(timedelta(hours=5))

    # THEN it was disabled once, three days after its first failure, and a person told
    disabled = hub.hooks.endpoint(endpoint.id)
    assert disabled is not None and disabled.disabled_at is not None and disabled.failing_since is not None
    assert disabled.disabled_at - disabled.failing_since >= timedelta(days=3)
    [(subject, message)] = hub.alarm.sent
    assert endpoint.id in subject and "alice" in message and f"http://127.0.0.1:{receiver.port}" in message
    assert "SECRET-TOKEN" not in message and hub.secrets[endpoint.id] not in message
    # AND nothing more is sent to it, though new changes wait for it
    count = len(receiver.received)
    hub.dispatcher.deliver(hub.change("later", source="d-later"))
    hub.clock.advance(timedelta(days=1))
    hub.dispatcher.deliver_due()
    assert len(receiver.received) == count
    assert hub.hooks.live_events(endpoint.id) == 1

    # WHEN the receiver works again and is tested: a 2xx ping enables it, and what waited is sent
    receiver.then = answer(200)
    pinged = hub.dispatcher.ping(endpoint.id)
    assert pinged is not None and pinged.answer.ok
    hub.dispatcher.deliver([endpoint.id])
    healthy = hub.hooks.endpoint(endpoint.id)
    assert healthy is not None and healthy.disabled_at is None and healthy.failing_since is None
    last = verify(receiver.received[-1], hub.secrets[endpoint.id])
    # (the last day's event was still waiting for a retry when the endpoint was disabled)
    assert sorted(a["slug"] for a in last["data"]["published"]) == ["day-3", "later"]


def test_a_ping_is_sent_once_and_never_retried(hub: Hub, receiver: WebhookReceiver) -> None:
    endpoint = hub.add(receiver.url(), events=())
    receiver.script = [answer(500)]
    sent = hub.dispatcher.ping(endpoint.id)

    assert sent is not None and sent.state == "failed" and not sent.answer.ok
    hub.clock.advance(timedelta(days=2))
    assert hub.dispatcher.deliver_due().sent == []
    [request] = receiver.received
    body = verify(request, hub.secrets[endpoint.id])
    assert body["type"] == "ping" and body["data"] == {
        "user": "alice",
        "endpoint": endpoint.id,
        "message": "blog-api webhook test",
    }
    assert hub.dispatcher.ping("ep_unknown") is None


def test_a_redelivery_resends_the_same_message(hub: Hub, receiver: WebhookReceiver) -> None:
    endpoint = hub.add(receiver.url())
    report = hub.dispatcher.deliver(hub.change("hello"))
    event_id = report.sent[0].event_id

    again = hub.dispatcher.redeliver(event_id)

    assert again is not None and again.answer.ok and again.number == 2
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert json.loads(first.body) == json.loads(second.body)
    verify(second, hub.secrets[endpoint.id])
    assert len(hub.hooks.attempts(endpoint.id)) == 2
    assert hub.dispatcher.redeliver("evt_unknown") is None


def test_log_lines_name_the_origin_never_the_path_or_a_secret(
    hub: Hub, receiver: WebhookReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint = hub.add(receiver.url("/build_hooks/TOKEN-IN-PATH?key=TOKEN-IN-QUERY"))
    receiver.script = [answer(500)]
    with caplog.at_level("INFO"):
        hub.dispatcher.deliver(hub.change("hello"))

    lines = [r for r in caplog.records if r.getMessage() == "Webhook attempt"]
    assert len(lines) == 2
    text = " ".join(str(vars(r)) for r in caplog.records)
    assert "TOKEN-IN-PATH" not in text and "TOKEN-IN-QUERY" not in text
    assert hub.secrets[endpoint.id] not in text
    assert vars(lines[0])["origin"] == f"http://127.0.0.1:{receiver.port}"
