"""The search, measured: query times, the index's size, and what keeping it costs the sync.

For each size, a real-shaped Japanese and English blog (``search_corpus``). At the first size the
blog is synced for real (the worker through the relay, as ``ours`` runs a push) and then:

- *first-sync overhead*: the index rebuilt from the stored articles alone
  (``function.store.migrations.search_index``, the migration step's code: tokenising, packing and
  writing the postings, and reading the articles back, which the sync does not need, so the figure is an upper
  bound), against the first sync's time without it (the sync's time minus the index's);
- *no-change push*: a push that touches only the README, its round trips and the statements on the
  search tables (there should be none).

Larger sizes are written straight into the database (a first sync of thousands of real-shaped
articles would only lengthen the run). Every size then times lexical searches through the real app on
the relayed database, the queries taking turns (a title's distinctive phrase, Japanese words, English
words, a mix), with the round trips of one, and measures the index's rows and bytes.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import peewee

from bench import search_corpus
from bench.measure import Measured
from bench.ours import run_push
from bench.reads import ReadTimes, _getter, _time
from bench.rig import USER, Rig
from function.search.postings import RECORD_BYTES
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.search_index import build_search_index
from tests.kit import builders
from tests.kit.github_fixtures import GitHubClientParts
from tests.kit.statements import count_statements

SEARCH_QUERY = "search: lexical query"
_SEED_BATCH = 250


@dataclass(frozen=True)
class SearchBench:
    n: int
    query: ReadTimes
    title_first: tuple[int, int]  # distinctive title phrases whose article came first, of those asked
    index_rows: int  # rows of packed postings
    entries: int  # (term, article) entries they hold
    index_bytes: int
    articles_bytes: int
    first_sync: Measured | None = None  # the real first sync (with the index), at the synced size
    index_ms: float | None = None  # the index alone, rebuilt from the stored articles
    no_change: Measured | None = None
    no_change_search_statements: int | None = None

    @property
    def overhead(self) -> float | None:
        """The index's share of the first sync, over the sync without it."""
        if self.first_sync is None or self.index_ms is None:
            return None
        without = self.first_sync.wall_ms - self.index_ms
        return self.index_ms / without if without > 0 else float("inf")


def measure_search(
    rig: Rig,
    parts: GitHubClientParts,
    n: int,
    calls: int,
    *,
    sync: bool,
    prewarm: Callable[[str], None],
) -> SearchBench:
    """The search's figures at ``n`` articles (``sync``: filled by a real first sync, with its
    overhead and a no-change push measured)."""
    repository, database = f"octo/search-{n}", f"bench_search_{n}"
    rig.fresh_database(database, repository)
    db = open_database(rig.relayed_url(database))
    extra: dict[str, Any] = {}
    try:
        if sync:
            extra = _synced(rig, parts, db, repository, n, prewarm)
        else:
            _seed(rig.direct_url(database), n)
        get = _getter(rig, db, database)
        queries = itertools.cycle(search_corpus.queries(40, n))
        path = f"/users/{USER}/articles/search?q="
        times = _time(rig, SEARCH_QUERY, n, calls, lambda: get(path + quote(next(queries))))
        title_first = _title_first(get, path, n)
        rows, entries, index_bytes, articles_bytes = _sizes(rig.direct_url(database))
    finally:
        db.close()
        rig.drop_database(database)
    return SearchBench(n, times, title_first, rows, entries, index_bytes, articles_bytes, **extra)


def _synced(
    rig: Rig,
    parts: GitHubClientParts,
    db: peewee.Database,
    repository: str,
    n: int,
    prewarm: Callable[[str], None],
) -> dict[str, Any]:
    rig.github.set_files(search_corpus.repository(n), repo=repository)
    prewarm(repository)
    first = run_push(rig, parts.source, db, repository, f"search-first-{n}")
    started = time.perf_counter()
    with connection(db):
        build_search_index(db)
    index_ms = (time.perf_counter() - started) * 1000
    rig.github.update_files({"README.md": b"# Zenn contents, revised\n"}, repo=repository)
    prewarm(repository)
    with count_statements(db) as seen:
        no_change = run_push(rig, parts.source, db, repository, f"search-no-change-{n}")
    touching = [s for s in seen.statements if "search_" in s]
    return {
        "first_sync": first,
        "index_ms": index_ms,
        "no_change": no_change,
        "no_change_search_statements": len(touching),
    }


def _seed(url: str, n: int) -> None:
    """``n`` articles of the corpus, parsed (front matter and Markdown; not rendered: the index reads
    the Markdown) and written as the sync writes them."""
    db = open_database(url)
    with connection(db):
        store = PeeweeStore(db)
        user = store.users.get_user(USER)
        assert user is not None
        for start in range(0, n, _SEED_BATCH):
            batch = []
            for i in range(start, min(start + _SEED_BATCH, n)):
                text = search_corpus.article(i).decode()
                _, front, body = text.split("---", 2)
                title = next(line for line in front.splitlines() if line.startswith("title:"))
                batch.append(
                    builders.article(
                        search_corpus.slug(i),
                        title=title[8:-1],
                        body=body,
                        publish=search_corpus.published(i),
                    )
                )
            builders.apply_as_worker(store, user.id, batch, [], builders.at(start * 60))
    db.close()


def _title_first(get: Callable[..., Any], path: str, n: int) -> tuple[int, int]:
    """How many of 20 published articles' distinctive title phrases find their article first."""
    asked = [i for i in range(0, n, max(1, n // 40)) if search_corpus.published(i)][:20]
    first = 0
    for i in asked:
        articles = get(path + quote(search_corpus.distinctive(i))).get_json()["articles"]
        first += bool(articles) and articles[0]["slug"] == search_corpus.slug(i)
    return first, len(asked)


def _sizes(url: str) -> tuple[int, int, int, int]:
    """Rows of the postings table and the entries they pack; bytes (data and indexes) of the index's
    tables and of the articles' (their rows and bodies)."""
    db = open_database(url)
    with connection(db):
        for table in ("articles", "article_bodies", "search_postings", "search_documents"):
            db.execute_sql(f"ANALYZE TABLE {table}")
        rows, packed = db.execute_sql(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(postings)), 0) FROM search_postings"
        ).fetchone()
        sizes = dict(
            db.execute_sql(
                "SELECT table_name, data_length + index_length FROM information_schema.tables "
                "WHERE table_schema = DATABASE()"
            ).fetchall()
        )
    db.close()
    index = int(sizes.get("search_postings", 0)) + int(sizes.get("search_documents", 0))
    articles = int(sizes.get("articles", 0)) + int(sizes.get("article_bodies", 0))
    return int(rows), int(packed) // RECORD_BYTES, index, articles
