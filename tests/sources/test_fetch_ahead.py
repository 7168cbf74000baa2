"""Fetches begun early answer the very same call once; any other call, or one after ``drop``, asks the
source itself."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from function.sources.fetch_ahead import FetchesAhead
from function.sources.port import FetchedFile, FetchResult, RepoFile, RepoRef, Snapshot

REPO = RepoRef("octo/blog", "main", 1)
A = RepoFile("articles/a.md", "a" * 40)
B = RepoFile("articles/b.md", "b" * 40)
SNAPSHOT = Snapshot("1" * 40, (A, B))


class CountingSource:
    """Answers each fetch with the file's path as its content, and counts the calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def snapshot(self, repo: RepoRef) -> Snapshot:
        return SNAPSHOT

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        self.calls.append(tuple(f.path for f in files))
        return [FetchedFile(f.path, f.sha, f.path.encode()) for f in files]


def test_the_same_call_answers_from_the_fetch_begun_once() -> None:
    source = CountingSource()
    ahead = FetchesAhead(source)
    with ThreadPoolExecutor(1) as pool:
        ahead.begin(pool, REPO, SNAPSHOT, [A], wanted_in_all=1)
        first = ahead.fetch(REPO, SNAPSHOT, [A], wanted_in_all=1)
        again = ahead.fetch(REPO, SNAPSHOT, [A], wanted_in_all=1)
    assert first == again == [FetchedFile(A.path, A.sha, b"articles/a.md")]
    assert source.calls == [("articles/a.md",), ("articles/a.md",)]  # begun once, then asked again
    assert ahead.begun() == 0


def test_another_call_or_one_after_drop_asks_the_source() -> None:
    source = CountingSource()
    ahead = FetchesAhead(source)
    with ThreadPoolExecutor(1) as pool:
        ahead.begin(pool, REPO, SNAPSHOT, [A], wanted_in_all=1)
        pool.shutdown(wait=True)
        assert ahead.fetch(REPO, SNAPSHOT, [A, B], wanted_in_all=2)[1].path == B.path  # other files
        assert ahead.fetch(REPO, Snapshot("2" * 40, (A,)), [A], wanted_in_all=1)  # another commit
        assert ahead.begun() == 1
        ahead.drop()
        ahead.fetch(REPO, SNAPSHOT, [A], wanted_in_all=1)
    assert source.calls == [
        ("articles/a.md",),
        ("articles/a.md", "articles/b.md"),
        ("articles/a.md",),
        ("articles/a.md",),
    ]
    assert ahead.begun() == 0


class StreamingSource(CountingSource):
    """Also gives a fetch's files one by one, recording how many were given."""

    def __init__(self) -> None:
        super().__init__()
        self.given = 0

    def fetch_stream(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> Iterator[FetchResult]:
        self.calls.append(tuple(f.path for f in files))
        for f in files:
            self.given += 1
            yield FetchedFile(f.path, f.sha, f.path.encode())


def test_a_stream_answers_from_the_fetch_begun_or_streams_from_the_source() -> None:
    source = StreamingSource()
    ahead = FetchesAhead(source)
    with ThreadPoolExecutor(1) as pool:
        ahead.begin(pool, REPO, SNAPSHOT, [A], wanted_in_all=1)
        begun = list(ahead.fetch_stream(REPO, SNAPSHOT, [A], wanted_in_all=1))
    assert begun == [FetchedFile(A.path, A.sha, b"articles/a.md")]
    assert source.calls == [("articles/a.md",)] and source.given == 0  # the begun fetch, not a stream

    stream = ahead.fetch_stream(REPO, SNAPSHOT, [A, B], wanted_in_all=2)
    assert next(stream).path == A.path
    assert source.given == 1  # file by file from the source
    assert [r.path for r in stream] == [B.path]


def test_a_stream_over_a_source_that_does_not_stream_gives_its_fetch() -> None:
    source = CountingSource()
    ahead = FetchesAhead(source)
    assert [r.path for r in ahead.fetch_stream(REPO, SNAPSHOT, [A, B])] == [A.path, B.path]
    assert source.calls == [("articles/a.md", "articles/b.md")]
