"""The read path, measured: the real app (Lambda mode) on the relayed database the sync just filled.

For each N: a list page from the middle of the list (reached by following ``nextCursor``), one
article, and a 304 revalidation of that page, each timed through the WSGI test client after warm-up
calls; the round trips of one call counted by the relay (the connection's set-up included: every
request connects and closes, as on Lambda); and the largest answer any read route gives at that N.

Then the front end's calls on a larger blog (``measure_front_end``, N=5,000 by default), written straight
into the database rather than synced (a sync of that size would only lengthen the run): a page by number
with its totals from the middle of the list, page 3 filtered by two tags in OR mode, and the tag facets of
the whole blog (every article's tags: the facets' largest answer).
"""

from __future__ import annotations

import random
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
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit import builders

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


# The front end's cases (``measure_front_end``), by name: the report's targets find them so.
NUMBERED_PAGE = "read: page by number with totals"
FILTERED_PAGE = "read: page 3, two tags in OR mode"
TAG_FACETS = "read: tag facets, whole blog"
FRONT_END_TAGS = (
    "tech/aws/lambda",
    "tech/aws/api-gateway",
    "tech/python",
    "tech/python/flask",
    "tech/database/tidb",
    "tech/git",
    "life",
    "life/travel",
    "books",
    "言語/日本語",
)
_SEED_BATCH = 250


def _getter(rig: Rig, db: peewee.Database, database: str) -> Callable[..., Any]:
    """GET on the real app in Lambda mode on the relayed ``database``; a non-200/304 answer raises."""
    settings = Settings(
        webhook_secret=secrets.token_hex(16),  # signs page cursors only
        database_url=rig.relayed_url(database),
        lambda_function_name="bench-blog-api",
        article_source="dir:/nonexistent",
        site_url="https://blog.example.com",
        ogp_default_image_url="https://blog.example.com/og.png",
    )
    client = create_app(services=Services(settings, database=db)).test_client()

    def get(path: str, **kwargs: Any) -> Any:
        answer = client.get(path, **kwargs)
        if answer.status_code not in (200, 304):
            raise RuntimeError(f"{path}: {answer.status_code} {answer.get_data(as_text=True)[:200]}")
        return answer

    return get


def measure_reads(rig: Rig, db: peewee.Database, database: str, n: int, calls: int) -> ReadResults:
    get = _getter(rig, db, database)
    base = f"/users/{USER}"

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


def measure_front_end(rig: Rig, n: int, calls: int) -> ReadResults:
    """The original front end's list, filter and facet calls on a blog of ``n`` articles (a fresh
    database, filled directly; dropped after)."""
    database = f"bench_front_end_{n}"
    rig.fresh_database(database, f"octo/blog-front-{n}")
    try:
        _seed(rig.direct_url(database), n)
        db = open_database(rig.relayed_url(database))
        try:
            get = _getter(rig, db, database)
            base = f"/users/{USER}/articles"
            two_tags = "tags=tech%2Faws,%E8%A8%80%E8%AA%9E%2F%E6%97%A5%E6%9C%AC%E8%AA%9E&mode=or"
            cases: dict[str, Callable[[], Any]] = {
                NUMBERED_PAGE: lambda: get(f"{base}?page={max(1, n // 20)}&perPage=10"),
                FILTERED_PAGE: lambda: get(f"{base}?page=3&perPage=10&{two_tags}"),
                TAG_FACETS: lambda: get(f"{base}/tag-facets"),
            }
            times = [_time(rig, case, n, calls, call) for case, call in cases.items()]
            sizes = {path: len(get(path).data) for path in (f"{base}?perPage=all", f"{base}/tag-facets")}
        finally:
            db.close()
    finally:
        rig.drop_database(database)
    largest = max(sizes, key=lambda path: sizes[path])
    return ReadResults(times, largest, sizes[largest])


def _seed(url: str, n: int) -> None:
    """``n`` published articles, one to four tags each from ``FRONT_END_TAGS``, a minute apart."""
    rng = random.Random(n)
    db = open_database(url)
    with connection(db):
        store = PeeweeStore(db)
        user = store.get_user(USER)
        assert user is not None
        for start in range(0, n, _SEED_BATCH):
            batch = [
                builders.article(corpus.slug(i), tags=tuple(rng.sample(FRONT_END_TAGS, rng.randint(1, 4))))
                for i in range(start, min(start + _SEED_BATCH, n))
            ]
            builders.apply_as_worker(store, user.id, batch, [], builders.at(start * 60))
    db.close()


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
