"""The redelivery rule (GitHub's documented algorithm for an App) against the stand-in's deliveries API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from function.github.hook_deliveries import GitHubHookDeliveries, HookDelivery, next_cursor
from function.github.http import HttpClient
from function.store.records import Watermark
from function.worker.redelivery import MAX_REDELIVERIES, plan, sweep
from tests.kit.github_fixtures import AppKey
from tests.kit.github_standin import GitHubStandIn
from tests.kit.hook_deliveries import NOW, HookDeliveries


class MemoryState:
    """A WatermarkStore in memory."""

    def __init__(self, mark: Watermark | None = None) -> None:
        self.mark = mark
        self.saves = 0

    def load(self) -> Watermark | None:
        return self.mark

    def save(self, mark: Watermark) -> None:
        self.mark = mark
        self.saves += 1


@pytest.fixture
def api(
    github: GitHubStandIn, github_app_key: AppKey, hook_deliveries: HookDeliveries
) -> Iterator[GitHubHookDeliveries]:
    from function.github.app_auth import GitHubAppAuth

    http = HttpClient(connect_timeout=1, read_timeout=2, attempts=1)
    auth = GitHubAppAuth(github.app_id, github_app_key.private_pem, github.url, http)
    yield GitHubHookDeliveries(auth, http, github.url)
    http.close()


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


def test_failed_then_ok_is_left_alone(api: GitHubHookDeliveries, hook_deliveries: HookDeliveries) -> None:
    hook_deliveries.add(guid="g", status_code=503, at=ago(30))
    hook_deliveries.add(guid="g", status_code=202, at=ago(20), redelivery=True)

    report = sweep(api, MemoryState(), now=NOW)

    assert hook_deliveries.redelivered == []
    assert report.decisions == []


def test_failed_twice_redelivers_only_the_newest_attempt_once(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    hook_deliveries.add(guid="g", status_code=503, at=ago(30))
    newest = hook_deliveries.add(guid="g", status_code=502, at=ago(20), redelivery=True)

    report = sweep(api, MemoryState(), now=NOW)

    assert hook_deliveries.redelivered == [newest["id"]]
    assert [d.id for d in report.redelivered] == [newest["id"]]


def test_a_failure_outside_the_window_is_left_alone(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    hook_deliveries.add(guid="old", status_code=503, at=NOW - timedelta(hours=25))

    report = sweep(api, MemoryState(), now=NOW, window=timedelta(hours=24))

    assert hook_deliveries.redelivered == []
    assert report.fetched == 0


def test_dry_run_sends_no_redelivery_and_keeps_no_state(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries, github: GitHubStandIn
) -> None:
    hook_deliveries.add(guid="g", status_code=503, at=ago(5))
    state = MemoryState()

    report = sweep(api, state, now=NOW, dry_run=True)

    assert [d.verdict for d in report.decisions] == ["redeliver"]
    assert github.count("redeliver") == 0
    assert state.saves == 0


def test_only_failures_are_redelivered_among_many(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    ok = hook_deliveries.add(guid="fine", status_code=200, at=ago(50))
    timed_out = hook_deliveries.add(guid="slow", status_code=0, status="timed out", at=ago(40))
    refused = hook_deliveries.add(guid="sig", status_code=401, at=ago(30))

    sweep(api, MemoryState(), now=NOW)

    assert sorted(hook_deliveries.redelivered) == sorted([timed_out["id"], refused["id"]])
    assert ok["id"] not in hook_deliveries.redelivered


def test_pages_are_followed_back_to_the_window_and_no_further(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries, github: GitHubStandIn
) -> None:
    # GIVEN 250 deliveries a minute apart (3 pages of 100), the one failure on the third page,
    # and 200 more deliveries before the window
    failed = hook_deliveries.add(guid="deep", status_code=500, at=ago(240))
    hook_deliveries.add_many(250, start=ago(1))
    hook_deliveries.add_many(200, start=NOW - timedelta(hours=30))

    report = sweep(api, MemoryState(), now=NOW, window=timedelta(hours=6))

    assert hook_deliveries.redelivered == [failed["id"]]
    assert report.fetched == 251
    assert report.pages == 3
    assert github.count("hook_deliveries") == 3


def test_the_window_is_at_most_three_days(api: GitHubHookDeliveries, hook_deliveries: HookDeliveries) -> None:
    hook_deliveries.add(guid="ancient", status_code=500, at=NOW - timedelta(days=3, hours=1))
    recent = hook_deliveries.add(guid="recent", status_code=500, at=NOW - timedelta(days=2))

    report = sweep(api, MemoryState(), now=NOW, window=timedelta(days=10))

    assert report.since == NOW - timedelta(days=3)
    assert hook_deliveries.redelivered == [recent["id"]]


def test_a_second_sweep_never_redelivers_the_same_attempt(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    failed = hook_deliveries.add(guid="g", status_code=503, at=ago(10))
    state = MemoryState()

    sweep(api, state, now=NOW)
    # GitHub has not (yet) recorded the redelivery's own attempt when the next sweep runs
    sweep(api, state, now=NOW + timedelta(hours=1))

    assert hook_deliveries.redelivered == [failed["id"]]
    assert state.mark is not None and state.mark.delivery_id == failed["id"]


def test_a_redelivery_that_failed_again_is_redelivered_by_the_next_sweep(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    first = hook_deliveries.add(guid="g", status_code=503, at=ago(10))
    state = MemoryState()
    sweep(api, state, now=NOW)
    again = hook_deliveries.add(guid="g", status_code=503, at=ago(9), redelivery=True)

    sweep(api, state, now=NOW + timedelta(hours=1))

    assert hook_deliveries.redelivered == [first["id"], again["id"]]


def test_the_sweep_gives_up_after_the_maximum_redeliveries(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    hook_deliveries.add(guid="g", status_code=400, at=ago(60))
    for i in range(MAX_REDELIVERIES):
        hook_deliveries.add(guid="g", status_code=400, at=ago(50 - i), redelivery=True)

    report = sweep(api, MemoryState(), now=NOW)

    assert hook_deliveries.redelivered == []
    assert [d.verdict for d in report.decisions] == ["gave up"]


def test_a_refused_redelivery_is_reported_and_tried_again_next_time(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries
) -> None:
    refused = hook_deliveries.add(guid="a", status_code=503, at=ago(20))
    other = hook_deliveries.add(guid="b", status_code=503, at=ago(10))
    hook_deliveries.refuse.add(refused["id"])
    state = MemoryState()

    report = sweep(api, state, now=NOW)
    hook_deliveries.refuse.clear()
    hook_deliveries.add(guid="b", status_code=200, at=ago(9), redelivery=True)
    sweep(api, state, now=NOW + timedelta(minutes=5))

    assert [e[0].id for e in report.errors] == [refused["id"]]
    assert hook_deliveries.redelivered == [other["id"], refused["id"]]


def test_the_app_jwt_authorises_every_call(
    api: GitHubHookDeliveries, hook_deliveries: HookDeliveries, github: GitHubStandIn
) -> None:
    hook_deliveries.add(guid="g", status_code=503, at=ago(1))

    sweep(api, MemoryState(), now=NOW)

    calls = [r for r in github.requests if r.kind in ("hook_deliveries", "redeliver")]
    assert [r.status for r in calls] == [200, 202]
    assert all(r.headers["authorization"].startswith("Bearer ey") for r in calls)
    assert calls[0].query["per_page"] == "100"


def delivery(id: int, guid: str, status: str, minutes_ago: float, redelivery: bool = False) -> HookDelivery:
    return HookDelivery(
        id, guid, ago(minutes_ago), status, 200 if status == "OK" else 500, "push", None, redelivery
    )


def test_plan_skips_attempts_at_or_below_the_watermark() -> None:
    history = [delivery(12, "b", "timed out", 1), delivery(11, "a", "Invalid HTTP Response: 503", 2)]

    decisions = plan(history, handled_up_to=11)

    assert [(d.attempt.id, d.verdict) for d in decisions] == [(12, "redeliver"), (11, "already handled")]


def test_success_is_status_ok_whatever_the_code() -> None:
    assert delivery(1, "a", "OK", 1).ok
    assert not delivery(2, "a", "Invalid HTTP Response: 503", 1).ok


def test_next_cursor_comes_from_the_link_header() -> None:
    link = (
        '<https://api.github.com/app/hook/deliveries?per_page=100&cursor=v1_99>; rel="next", '
        '<https://api.github.com/app/hook/deliveries?per_page=100>; rel="first"'
    )

    assert next_cursor(link) == "v1_99"
    assert next_cursor('<https://x/?cursor=v1_1>; rel="prev"') is None
    assert next_cursor(None) is None
