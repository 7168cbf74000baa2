"""Exact semantic search in the process: the query's vector against every chunk vector of the user's
served articles, cosine similarity with numpy, each article ranked by its closest chunk.

Why exact, and up to what size: a personal blog has hundreds to a few thousand articles, a few chunks
each. At 1,024 dimensions a chunk's vector is 4 KB, so 5,000 articles of 8 chunks are 40,000 vectors,
160 MB, and one matrix-vector product over them takes milliseconds; an index would save little and
return approximate answers. What costs is reading the vectors from the database, so they are cached by
the process, per user, and read again only when the user's vectors changed (``EmbeddingQueries.
fingerprint``: one aggregate SELECT per search). The cache holds at most ``CACHE_MAX_BYTES`` in all
(least recently used users leave first); a user whose vectors alone pass it is searched from the
database each time. docs/performance.md has the figures, and when TiDB's vector index should take over.

The answer is the cosine distance (1 - cosine similarity: 0 for the same direction, 2 for the opposite)
of each article's closest chunk, closest first.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from function.embeddings.port import EmbeddingProvider
from function.errors import EmbeddingFailed
from function.store.embeddings import EmbeddingQueries, UserVectors

log = logging.getLogger(__name__)

# The cache's bound, in vector bytes over every user: the function has 3 GB, a blog's vectors rarely
# 50 MB (docs/performance.md).
CACHE_MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class _Index:
    """One user's vectors ready to search: unit rows, grouped by article (rows of one article are
    consecutive: ``starts`` is where each article's rows begin)."""

    key: tuple[int, int, str]
    article_ids: np.ndarray  # int64, one per article
    starts: np.ndarray  # int64, one per article
    unit: np.ndarray  # float32, chunks by dimensions, each row of length 1

    @property
    def nbytes(self) -> int:
        return int(self.unit.nbytes + self.article_ids.nbytes + self.starts.nbytes)


def build_index(vectors: UserVectors, key: tuple[int, int, str]) -> _Index:
    """``vectors`` normalised and grouped by article (they come ordered by article)."""
    ids = vectors.article_ids
    if len(ids) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return _Index(key, empty, empty, np.zeros((0, 0), dtype=np.float32))
    change = np.flatnonzero(np.diff(ids)) + 1
    starts = np.concatenate(([0], change)).astype(np.int64)
    norms = np.linalg.norm(vectors.matrix, axis=1, keepdims=True)
    unit = (vectors.matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
    return _Index(key, ids[starts], starts, unit)


def closest(index: _Index, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` articles of ``index`` closest to ``query``, as (article id, cosine distance)."""
    if limit <= 0 or len(index.article_ids) == 0 or index.unit.shape[1] != len(query):
        return []
    norm = float(np.linalg.norm(query))
    if norm == 0:
        return []
    similarity = index.unit @ (query.astype(np.float32) / norm)
    best = np.maximum.reduceat(similarity, index.starts)  # each article: its closest chunk
    count = min(limit, len(best))
    top = np.argpartition(-best, count - 1)[:count]
    # Closest first; equal distances by article id, so the order is the same every time.
    order = sorted(top, key=lambda i: (-float(best[i]), int(index.article_ids[i])))
    return [(int(index.article_ids[i]), round(max(0.0, 1.0 - float(best[i])), 6)) for i in order]


class VectorCache:
    """One process's indexes by user, at most ``max_bytes`` in all (least recently used leave first)."""

    def __init__(self, max_bytes: int = CACHE_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[int, str], _Index] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # indexes built from the database (the tests and the benchmark read it)

    def get(self, queries: EmbeddingQueries, user_id: int, model: str) -> _Index:
        """The user's index for ``model``: the cached one while the vectors' fingerprint is the same, else
        read again from the database."""
        key = queries.fingerprint(user_id, model)
        with self._lock:
            cached = self._entries.get((user_id, model))
            if cached is not None and cached.key == key:
                self._entries.move_to_end((user_id, model))
                return cached
        index = build_index(queries.vectors(user_id, model), key)
        with self._lock:
            self.loads += 1
            self._entries.pop((user_id, model), None)
            if index.nbytes <= self.max_bytes:
                self._entries[(user_id, model)] = index
                while sum(entry.nbytes for entry in self._entries.values()) > self.max_bytes:
                    self._entries.popitem(last=False)
        return index


class ExactSemanticSearch:
    """``function.search.port.SemanticSearch``: the provider embeds the query, the cache gives the
    user's vectors, numpy ranks them (see the module's docstring)."""

    def __init__(self, provider: EmbeddingProvider, queries: EmbeddingQueries, cache: VectorCache) -> None:
        self._provider = provider
        self._queries = queries
        self._cache = cache

    def search(self, user_id: int, query: str, limit: int) -> list[tuple[int, float]]:
        """At most ``limit`` (article id, cosine distance), closest first. Raises EmbeddingFailed."""
        try:
            vector = self._provider.embed_query(query)
        except EmbeddingFailed as exc:
            # The reader gets a general 502; what failed, and where, goes to the log.
            log.warning("Query not embedded", extra={"user_id": user_id, "error": exc.detail})
            raise
        index = self._cache.get(self._queries, user_id, self._provider.model)
        return closest(index, vector, limit)
