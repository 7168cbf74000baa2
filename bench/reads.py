"""The read path, measured: the real app (Lambda mode) on the relayed database the sync just filled.

For each N: a list page from the middle of the list (reached by following ``nextCursor``), one
article, and a 304 revalidation of that page, each timed through the WSGI test client after warm-up
calls; the round trips of one call counted by the relay (the connection's set-up included: every
request connects and closes, as on Lambda); and the largest answer any read route gives at that N.
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import peewee

from bench import corpus
from bench.measure import measuring
from bench.rig import USER, Rig
from function.app import create_app
from function.services import Services
from function.settings import Settings

WARM_UP = 5


@dataclass(frozen=True)
class ReadTimes:
    case: str
    n: int
    p50_ms: float
    p99_ms: float
    calls: int
    db_round_trips: int  # of one call, through the relay
    db_connections: int
    answer_bytes: int


@dataclass(frozen=True)
class ReadResults:
    times: list[ReadTimes]
    largest_route: str
    largest_bytes: int


def measure_reads(rig: Rig, db: peewee.Database, database: str, n: int, calls: int) -> ReadResults:
    settings = Settings(
        webhook_secret=secrets.token_hex(16),  # signs page cursors only
        database_url=rig.relayed_url(database),
        lambda_function_name="bench-blog-api",
        article_source="dir:/nonexistent",
        site_url="https://blog.example.com",
    )
    client = create_app(services=Services(settings, database=db)).test_client()
    base = f"/users/{USER}"

    def get(path: str, **kwargs: Any) -> Any:
        answer = client.get(path, **kwargs)
        if answer.status_code not in (200, 304):
            raise RuntimeError(f"{path}: {answer.status_code} {answer.get_data(as_text=True)[:200]}")
        return answer

    middle = _middle_page(get, f"{base}/articles", n)
    etag = get(middle).headers["ETag"]
    article = f"{base}/articles/{corpus.slug(min(7, n - 1))}"
    cases: dict[str, Callable[[], Any]] = {
        "read: list page": lambda: get(middle),
        "read: one article": lambda: get(article),
        "read: 304 revalidation": lambda: get(middle, headers={"If-None-Match": etag}),
    }
    times = [_time(rig, case, n, calls, call) for case, call in cases.items()]
    sizes = {
        path: len(get(path).data)
        for path in (
            f"{base}/articles?limit=100",
            article,
            f"{base}/tags",
            f"{base}/feed.xml",
            f"{base}/sitemap.xml",
        )
    }
    largest = max(sizes, key=lambda path: sizes[path])
    return ReadResults(times, largest, sizes[largest])


def _middle_page(get: Callable[..., Any], path: str, n: int) -> str:
    """The URL of the page halfway down the list (the first page when there is only one)."""
    url, pages = path, 0
    while pages < (n // 20) // 2:
        cursor = get(url).get_json()["nextCursor"]
        if cursor is None:
            break
        url, pages = f"{path}?cursor={cursor}", pages + 1
    return url


def _time(rig: Rig, case: str, n: int, calls: int, call: Callable[[], Any]) -> ReadTimes:
    for _ in range(WARM_UP):
        call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    with measuring(rig) as measured:
        answer = call()
    samples.sort()
    p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
    return ReadTimes(
        case=case,
        n=n,
        p50_ms=statistics.median(samples),
        p99_ms=p99,
        calls=calls,
        db_round_trips=measured.db_round_trips,
        db_connections=measured.db_connections,
        answer_bytes=len(answer.data),
    )
