"""Fetches begun before they are asked for: an article source whose ``fetch`` answers from a fetch started
earlier with the very same arguments, and asks the source itself for anything else.

A push's changed blobs can be requested as soon as the pushed commit's listing and the database's index
are known, while the branch head is still being read (``function.worker.sync.push_read``). A blob is
addressed by its content, so what was fetched is what the same call would fetch later; each begun fetch
answers once, and ``drop`` forgets whatever was not asked for (the head had moved on, or the run ended).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, Future

from function.sources.port import ArticleSource, FetchResult, RepoFile, RepoRef, Snapshot, StreamsFetches

_Key = tuple[RepoRef, str, tuple[RepoFile, ...], int | None]


class FetchesAhead:
    """``ArticleSource`` over ``source``, with fetches that can be begun early (thread-safe)."""

    def __init__(self, source: ArticleSource) -> None:
        self._source = source
        self._lock = threading.Lock()
        self._begun: dict[_Key, Future[list[FetchResult]]] = {}

    def snapshot(self, repo: RepoRef) -> Snapshot:
        return self._source.snapshot(repo)

    def begin(
        self,
        pool: Executor,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> None:
        """Start ``fetch(repo, snapshot, files, wanted_in_all=...)`` on ``pool``; the same call answers
        from it."""
        key = _key(repo, snapshot, files, wanted_in_all)
        future = pool.submit(self._source.fetch, repo, snapshot, files, wanted_in_all=wanted_in_all)
        with self._lock:
            self._begun[key] = future

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        with self._lock:
            begun = self._begun.pop(_key(repo, snapshot, files, wanted_in_all), None)
        if begun is not None:
            return begun.result()  # the source's fetch never raises: its failures are results
        return self._source.fetch(repo, snapshot, files, wanted_in_all=wanted_in_all)

    def fetch_stream(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> Iterator[FetchResult]:
        """``fetch``, file by file when the source streams and nothing was begun for these files."""
        with self._lock:
            begun = self._begun.pop(_key(repo, snapshot, files, wanted_in_all), None)
        if begun is not None:
            yield from begun.result()
        elif isinstance(self._source, StreamsFetches):
            yield from self._source.fetch_stream(repo, snapshot, files, wanted_in_all=wanted_in_all)
        else:
            yield from self._source.fetch(repo, snapshot, files, wanted_in_all=wanted_in_all)

    def drop(self) -> None:
        """Forget the fetches begun and not asked for (their threads are the pool owner's to wait for)."""
        with self._lock:
            self._begun.clear()

    def begun(self) -> int:
        """How many begun fetches have not been asked for yet."""
        with self._lock:
            return len(self._begun)


def _key(repo: RepoRef, snapshot: Snapshot, files: Sequence[RepoFile], wanted_in_all: int | None) -> _Key:
    return (repo, snapshot.head_sha, tuple(files), wanted_in_all)
