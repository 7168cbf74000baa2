"""``blog-api logs durations``: received → complete per delivery from CloudWatch Logs, every page read."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from function.cli.log_durations import COMPLETE, RECEIVED, pair, percentile, read_events, stats
from tests.kit.cli import run_cli

GROUP = "/aws/lambda/d-st-blog-api"


def line(message: str, delivery: str, **fields: Any) -> str:
    return json.dumps(
        {"time": "t", "level": "INFO", "logger": "x", "message": message, "delivery": delivery, **fields}
    )


@pytest.fixture
def logs(aws_env: None) -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("logs")
        client.create_log_group(logGroupName=GROUP)
        yield client


def put(client: Any, stream: str, events: list[tuple[int, str]]) -> None:
    client.create_log_stream(logGroupName=GROUP, logStreamName=stream)
    for start in range(0, len(events), 1000):
        chunk = sorted(events[start : start + 1000])
        client.put_log_events(
            logGroupName=GROUP,
            logStreamName=stream,
            logEvents=[{"timestamp": ts, "message": msg} for ts, msg in chunk],
        )


def seed_deliveries(client: Any, n: int) -> int:
    """``n`` deliveries: the accept path logs on one stream, the worker on another (as two Lambda
    invocations do), with the runtime's own lines around them. Delivery i takes (i + 1) * 10 ms."""
    base = int(time.time() * 1000) - 30 * 60 * 1000
    accept, worker = [], []
    for i in range(n):
        received = base + i * 1000
        accept.append((received, line(RECEIVED, f"d-{i:03d}", event="push")))
        accept.append((received + 1, "END RequestId: 1b2c"))
        worker.append((received + 2, "START RequestId: 9f8e Version: $LATEST"))
        worker.append(
            (
                received + (i + 1) * 10,
                line(COMPLETE, f"d-{i:03d}", duration_ms=(i + 1) * 9.5, processed=4, failed=0),
            )
        )
        worker.append((received + (i + 1) * 10 + 1, line("Reconciled articles", f"d-{i:03d}")))
    put(client, "2026/03/02/[$LATEST]accept", accept)
    put(client, "2026/03/02/[$LATEST]worker", worker)
    return base


def test_every_page_is_read_and_each_delivery_paired(logs: Any) -> None:
    # GIVEN 120 deliveries (240 matching lines, 600 in all) and pages of 50 events
    seed_deliveries(logs, 120)

    # WHEN the durations are asked for
    result = run_cli("logs", "durations", "--log-group", GROUP, "--since", "2h", "--page-size", "50")

    # THEN every delivery is there, paired, with p50 / p95 / max over all of them
    assert result.exit_code == 0, result.stderr
    header, *rows, summary = result.stdout.splitlines()
    assert header.startswith("delivery\treceived\tcomplete\tduration_ms")
    assert [r.split("\t")[0] for r in rows] == [f"d-{i:03d}" for i in range(120)]
    first = rows[0].split("\t")
    assert (first[3], first[4], first[5], first[6]) == ("10", "10", "4", "0")
    assert summary == "deliveries=120 p50_ms=600 p95_ms=1140 max_ms=1200 unfinished=0"


def test_a_delivery_without_completion_is_listed_as_unfinished(logs: Any) -> None:
    now = int(time.time() * 1000)
    put(
        logs,
        "s",
        [
            (now - 5000, line(RECEIVED, "d-a")),
            (now - 4000, line(COMPLETE, "d-a")),
            (now - 3000, line(RECEIVED, "d-b")),
        ],
    )

    result = run_cli("logs", "durations", "--log-group", GROUP, "--since", "10m")

    rows = result.stdout.splitlines()
    assert rows[2].split("\t")[:4] == ["d-b", rows[2].split("\t")[1], "-", "-"]
    assert rows[-1] == "deliveries=1 p50_ms=1000 p95_ms=1000 max_ms=1000 unfinished=1"


def test_events_older_than_since_are_not_read(logs: Any) -> None:
    now = int(time.time() * 1000)
    three_hours = 3 * 3600 * 1000
    put(
        logs,
        "s",
        [(now - three_hours, line(RECEIVED, "old")), (now - three_hours + 50, line(COMPLETE, "old"))],
    )

    result = run_cli("logs", "durations", "--log-group", GROUP, "--since", "2h")

    assert result.exit_code == 0
    assert "old" not in result.stdout
    assert result.stdout.splitlines()[-1].startswith("no complete deliveries")


def test_unknown_log_group_is_a_one_line_error(logs: Any) -> None:
    result = run_cli("logs", "durations", "--log-group", "/nope")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "ResourceNotFoundException" in result.stderr


def test_bad_since_is_a_usage_error() -> None:
    result = run_cli("logs", "durations", "--log-group", GROUP, "--since", "yesterday")

    assert result.exit_code == 2
    assert "not a duration" in result.stderr


class PagedLogs:
    """CloudWatch's real habit: pages that come back empty, yet with a token for more."""

    def __init__(self, pages: list[list[dict[str, Any]]]) -> None:
        self.pages = pages
        self.calls: list[dict[str, Any]] = []

    def filter_log_events(self, **request: Any) -> dict[str, Any]:
        self.calls.append(request)
        index = int(request.get("nextToken", "0"))
        answer: dict[str, Any] = {"events": self.pages[index]}
        if index + 1 < len(self.pages):
            answer["nextToken"] = str(index + 1)
        return answer


def test_empty_pages_with_a_token_do_not_end_the_read() -> None:
    fake = PagedLogs(
        [
            [],
            [{"timestamp": 1000, "message": line(RECEIVED, "d")}],
            [],
            [{"timestamp": 1500, "message": line(COMPLETE, "d")}],
        ]
    )

    events = list(read_events(fake, GROUP, 0))

    assert len(fake.calls) == 4
    assert [t.duration_ms for t in pair(events)] == [500.0]
    assert fake.calls[0]["filterPattern"].startswith("{")


def test_a_retried_delivery_keeps_its_first_receipt_and_last_completion() -> None:
    events = [
        {"timestamp": 1000, "message": line(RECEIVED, "d")},
        {"timestamp": 2000, "message": line(COMPLETE, "d")},
        {"timestamp": 9000, "message": line(RECEIVED, "d")},
        {"timestamp": 9500, "message": line(COMPLETE, "d")},
    ]

    [timing] = pair(events)

    assert timing.duration_ms == 8500.0


def test_a_line_with_a_runtime_prefix_is_still_read() -> None:
    events = [
        {"timestamp": 1000, "message": "2026-03-02T09:00:00Z\tabc\tINFO\t" + line(RECEIVED, "d")},
        {"timestamp": 1200, "message": line(COMPLETE, "d")},
    ]

    assert [t.duration_ms for t in pair(events)] == [200.0]


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]

    assert (percentile(values, 50), percentile(values, 95), percentile(values, 100)) == (50.0, 95.0, 100.0)
    assert stats([]) is None


def test_only_push_deliveries_are_paired() -> None:
    events = [
        {"timestamp": 1000, "message": line(RECEIVED, "p", event="ping")},
        {"timestamp": 1100, "message": line(RECEIVED, "i", event="installation")},
        {"timestamp": 1200, "message": line(RECEIVED, "d", event="push")},
        {"timestamp": 1300, "message": line(COMPLETE, "d")},
    ]

    assert [t.delivery for t in pair(events)] == ["d"]
