"""Semantic search's exact cosine search, measured: ``python -m bench.vectors``.

For each size (chunk vectors of one user, 1,024 dimensions as Titan V2 makes them): the vectors written
into a SQLite database the way the sync writes them, then read back and made into the search index as a
cold process does (``EmbeddingQueries.vectors`` and ``build_index``), the index's memory, and the time of
one query against it once cached (median and p99 of ``QUERIES`` random queries). The figures are the
ones ``docs/performance.md`` quotes for when TiDB's vector index should take over.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import peewee

from function.embeddings.vector_search import build_index, closest
from function.store.backends import open_database
from function.store.connection import connection
from function.store.embeddings import EmbeddingQueries, pack
from function.store.facade import PeeweeStore
from function.store.models import ArticleChunk, ArticleEmbedding
from function.store.schema import create_tables
from tests.kit.builders import T0, apply_as_worker, article

DIMENSIONS = 1024
CHUNKS_PER_ARTICLE = 8
QUERIES = 200


@dataclass(frozen=True)
class VectorFigures:
    chunks: int
    articles: int
    stored_mb: float  # the vectors' bytes in the database
    load_ms: float  # read from the database and indexed (a cold process, or vectors that changed)
    index_mb: float  # the index in memory
    query_p50_ms: float
    query_p99_ms: float


def measure(chunks: int, workdir: Path, dimensions: int = DIMENSIONS) -> VectorFigures:
    """The figures of one user with ``chunks`` chunk vectors (``CHUNKS_PER_ARTICLE`` an article)."""
    articles = max(1, chunks // CHUNKS_PER_ARTICLE)
    db = open_database(f"sqlite:///{workdir}/vectors-{chunks}.db")
    rng = np.random.default_rng(chunks)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        user = store.users.add_user("bench", "bench@example.com", 1, "bench/blog")
        apply_as_worker(store, user.id, [article(f"a{i:05d}") for i in range(articles)], [], T0)
        ids = sorted(stored.id for stored in store.reconcile.load_index(user.id).values())
        _write_vectors(db, ids, chunks, dimensions, rng)
        queries = EmbeddingQueries(store.session)
        started = time.perf_counter()
        index = build_index(queries.vectors(user.id, "bench"), queries.fingerprint(user.id, "bench"))
        load_ms = (time.perf_counter() - started) * 1000
        timings = []
        for _ in range(QUERIES):
            query = rng.standard_normal(dimensions).astype(np.float32)
            started = time.perf_counter()
            closest(index, query, 20)
            timings.append((time.perf_counter() - started) * 1000)
    db.close()
    timings.sort()
    return VectorFigures(
        chunks=chunks,
        articles=articles,
        stored_mb=chunks * dimensions * 4 / 1e6,
        load_ms=load_ms,
        index_mb=index.nbytes / 1e6,
        query_p50_ms=statistics.median(timings),
        query_p99_ms=timings[min(len(timings) - 1, int(len(timings) * 0.99))],
    )


def _write_vectors(
    db: peewee.Database, ids: list[int], chunks: int, dimensions: int, rng: np.random.Generator
) -> None:
    """``chunks`` random vectors spread over the articles ``ids``, in rows as the sync writes them."""
    per_article = max(1, chunks // len(ids))
    with db.atomic():
        for article_id in ids:
            rows = [
                {
                    "article": article_id,
                    "position": position,
                    "heading": "",
                    "content": "",
                    "token_count": 0,
                    "vector": pack(rng.standard_normal(dimensions).astype(np.float32)),
                }
                for position in range(per_article)
            ]
            ArticleChunk.insert_many(rows).bind(db).execute()
            ArticleEmbedding.insert(
                article=article_id,
                article_hash="",
                text_hash="",
                chunking="bench",
                model="bench",
                dimensions=dimensions,
                chunk_count=per_article,
                embedded_at=T0,
            ).bind(db).execute()


def table(figures: list[VectorFigures]) -> str:
    lines = [
        "| chunk vectors (articles) | stored | read + indexed | index in memory | query p50 | query p99 |",
        "|---|---|---|---|---|---|",
    ]
    for f in figures:
        lines.append(
            f"| {f.chunks:,} ({f.articles:,}) | {f.stored_mb:.0f} MB | {f.load_ms:,.0f} ms | "
            f"{f.index_mb:.0f} MB | {f.query_p50_ms:.2f} ms | {f.query_p99_ms:.2f} ms |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.vectors", description=__doc__)
    parser.add_argument(
        "--chunks", default="4000,40000,100000", help="chunk vectors per user, comma-separated"
    )
    parser.add_argument("--dimensions", type=int, default=DIMENSIONS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        sizes = [int(size) for size in args.chunks.split(",") if size]
        print(table([measure(size, Path(folder), args.dimensions) for size in sizes]))


if __name__ == "__main__":
    main()
