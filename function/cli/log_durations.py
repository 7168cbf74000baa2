"""How long deliveries took, from the function's own log lines in CloudWatch Logs.

Every delivery logs ``Received GitHub webhook`` (the accept path) and ``Webhook processing complete``
(the worker), both with the ``delivery`` field. This pairs them by delivery id.
Events are read with ``filter_log_events`` and every ``nextToken`` followed: CloudWatch may return a
page short of events (even an empty one) with a token, and stopping early would silently drop
deliveries — the reason ``aws logs tail`` is not good enough under load.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from function.observability.logs import COMPLETE_MESSAGE, RECEIVED_MESSAGE

# The two lines paired, by the names this module's readers use.
COMPLETE = COMPLETE_MESSAGE
RECEIVED = RECEIVED_MESSAGE

# CloudWatch's JSON filter: only these two kinds of lines cross the network. (moto ignores JSON
# patterns and returns everything; ``pair`` filters again, so both agree.)
FILTER_PATTERN = f'{{ ($.message = "{RECEIVED}") || ($.message = "{COMPLETE}") }}'


@dataclass(frozen=True)
class DeliveryTiming:
    delivery: str
    received: datetime | None
    complete: datetime | None
    duration_ms: float | None  # received → complete (wall clock between the two log lines)
    worker_ms: float | None  # the worker's own duration_ms field
    processed: int | None = None
    failed: int | None = None


def read_events(
    client: Any,
    log_group: str,
    start_ms: int,
    end_ms: int | None = None,
    *,
    page_size: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Every matching event of ``log_group`` in the time range, following ``nextToken`` to the end."""
    request: dict[str, Any] = {
        "logGroupName": log_group,
        "startTime": start_ms,
        "filterPattern": FILTER_PATTERN,
    }
    if end_ms is not None:
        request["endTime"] = end_ms
    if page_size is not None:
        request["limit"] = page_size
    token: str | None = None
    while True:
        answer = client.filter_log_events(**request, **({"nextToken": token} if token else {}))
        yield from answer.get("events", [])
        next_token = answer.get("nextToken")
        # A repeated token would loop for ever; CloudWatch never sends one, a broken stand-in might.
        if not next_token or next_token == token:
            return
        token = next_token


def parse_line(message: str) -> dict[str, Any] | None:
    """The JSON object of a log line, also when the runtime put a prefix before it; None otherwise."""
    start = message.find("{")
    if start < 0:
        return None
    try:
        data = json.loads(message[start:])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def pair(events: Iterable[dict[str, Any]]) -> list[DeliveryTiming]:
    """Pair received and complete lines of push deliveries by delivery id, in order of receipt. A
    delivery processed twice (a retry, a redelivery) keeps its first receipt and its last completion."""
    received: dict[str, datetime] = {}
    complete: dict[str, tuple[datetime, dict[str, Any]]] = {}
    for event in events:
        line = parse_line(str(event.get("message", "")))
        if line is None or not isinstance(line.get("delivery"), str):
            continue
        when = datetime.fromtimestamp(int(event["timestamp"]) / 1000, UTC)
        delivery = line["delivery"]
        if line.get("message") == RECEIVED:
            # Only pushes are processed by the worker; a ping or an installation event never logs
            # "complete" and would only pad the unfinished count.
            if line.get("event", "push") != "push":
                continue
            if delivery not in received or when < received[delivery]:
                received[delivery] = when
        elif line.get("message") == COMPLETE:
            if delivery not in complete or when >= complete[delivery][0]:
                complete[delivery] = (when, line)
    order = sorted(set(received) | set(complete), key=lambda d: (received.get(d) or complete[d][0], d))
    timings = []
    for delivery in order:
        got, done = received.get(delivery), complete.get(delivery)
        fields = done[1] if done else {}
        timings.append(
            DeliveryTiming(
                delivery=delivery,
                received=got,
                complete=done[0] if done else None,
                duration_ms=(done[0] - got).total_seconds() * 1000 if got and done else None,
                worker_ms=_number(fields.get("duration_ms")),
                processed=_int(fields.get("processed")),
                failed=_int(fields.get("failed")),
            )
        )
    return timings


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Stats:
    count: int
    p50: float
    p95: float
    max: float


def stats(timings: Iterable[DeliveryTiming]) -> Stats | None:
    """p50 / p95 / max of received → complete over the paired deliveries; None when none paired."""
    values = [t.duration_ms for t in timings if t.duration_ms is not None]
    if not values:
        return None
    return Stats(len(values), percentile(values, 50), percentile(values, 95), max(values))
