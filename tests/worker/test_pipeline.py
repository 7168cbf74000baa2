"""The first sync's pipeline holds little whatever the repository's size: the reading runs at most a
bounded number of articles ahead of the writes, and no chunk is downloaded before the one two back is
committed; and it writes what the sequential path writes, in the same transactions' bounds."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from function.articles.parsed import ParsedArticle
from function.aws.deadline import UNLIMITED
from function.sources.folder import DirectorySource
from function.sources.port import FetchResult, RepoFile, RepoRef, Snapshot
from function.store.records import ApplyResult, RememberedFailure
from function.worker.sync.chunked import ChunkedSync
from function.worker.sync.plan import Known, Planner
from function.worker.sync.reading import Chunk, ChunkReader
from function.worker.sync.writing import ArticleWriter
from tests.kit.blog_fixtures import article

ARTICLES, CHUNK, TRANSACTION, AHEAD = 60, 20, 5, 4
REPO = RepoRef("octo/blog", "main", 1)


class Log:
    """What happened, in order, across the reading thread and the writes."""

    def __init__(self) -> None:
        self.events: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()

    def add(self, kind: str, paths: list[str]) -> None:
        with self._lock:
            self.events.append((kind, paths))


class LoggedSource(DirectorySource):
    """A folder that logs each fetch and records each file as it gives it, one at a time (as a tarball
    being read does)."""

    def __init__(self, root: Path, log: Log) -> None:
        super().__init__(root)
        self.log = log
        self.given: list[str] = []

    def fetch_stream(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> Iterator[FetchResult]:
        self.log.add("fetch", [f.path for f in files])
        for result in super().fetch_stream(repo, snapshot, files, wanted_in_all=wanted_in_all):
            self.given.append(result.path)
            yield result


class GatedWrites:
    """The store's writes, recorded; the first transaction waits until ``release`` (a slow database)."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.release = threading.Event()
        self.waiting = threading.Event()
        self.batches: list[list[str]] = []

    def apply(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        archive_slugs: Sequence[str],
        now: datetime,
        *,
        index: Mapping[str, Any],
        render_fingerprint: str | None = None,
        reindex: bool = False,
    ) -> ApplyResult:
        if not self.batches:
            self.waiting.set()
            assert self.release.wait(60), "the test never released the first transaction"
        self.batches.append([a.slug for a in articles])
        self.log.add("commit", [a.path for a in articles])
        return ApplyResult(written=len(articles), unchanged=0, archived=0)

    def remember_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None:
        pass

    def row_bytes(self, user_id: int, slugs: Sequence[str]) -> dict[str, int]:
        return dict.fromkeys(slugs, 1)  # these syncs archive nothing


def repository(root: Path) -> None:
    (root / "articles").mkdir(parents=True)
    for i in range(ARTICLES):
        (root / "articles" / f"a{i:03}.md").write_bytes(
            article(f"A{i}", body=f"Body {i}.\n\n```python\nx = {i}\n```")
        )


def chunked(source: DirectorySource, writes: GatedWrites, *, read_ahead: bool, processes: int) -> ChunkedSync:
    reader = ChunkReader(
        source,
        articles_dir="articles",
        allow_raw_html=False,
        timezone=None,
        asset_base_url=None,
        render_processes=processes,
    )
    writer = ArticleWriter(
        writes, lambda: datetime.now(UTC).replace(tzinfo=None), batch_max_articles=TRANSACTION
    )
    return ChunkedSync(reader, writer, read_ahead=read_ahead, ahead_articles=AHEAD)


@pytest.mark.parametrize("processes", [0, 2])
def test_the_reading_stays_a_bounded_number_of_articles_ahead_of_a_slow_database(
    tmp_path: Path, processes: int
) -> None:
    # GIVEN a first sync of three chunks whose first transaction waits on the database
    repository(tmp_path)
    log = Log()
    source, writes = LoggedSource(tmp_path, log), GatedWrites(log)
    sync = chunked(source, writes, read_ahead=True, processes=processes)
    plan = Planner("articles", chunk_max_files=CHUNK).plan(source.snapshot(REPO), Known({}, {}))
    summary: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: summary.update(done=sync.run(1, REPO, plan, Known({}, {}), UNLIMITED))
    )
    runner.start()
    # WHEN the database is slow: the reading fills what it may hand over, then waits
    assert writes.waiting.wait(60)
    pipeline = sync.last_pipeline
    assert pipeline is not None and pipeline.handoff is not None
    handoff = pipeline.handoff
    assert handoff.wait_until_full(60)
    fetched_while_stuck = [paths for kind, paths in log.events if kind == "fetch"]
    writes.release.set()
    runner.join(120)

    # THEN while it waited, no more than the bound was read ahead: one chunk downloaded, the first
    # transaction's articles, the one that closed it and AHEAD articles handed over
    assert len(fetched_while_stuck) == 1
    assert handoff.most_articles == AHEAD
    # and every article was written, in order, in transactions of at most TRANSACTION articles
    written = [slug for batch in writes.batches for slug in batch]
    assert written == [f"a{i:03}" for i in range(ARTICLES)]
    assert max(len(batch) for batch in writes.batches) == TRANSACTION
    assert summary["done"].written == ARTICLES


@pytest.mark.parametrize("read_ahead", [True, False])
def test_no_chunk_is_downloaded_before_the_one_two_back_is_committed(
    tmp_path: Path, read_ahead: bool
) -> None:
    repository(tmp_path)
    log = Log()
    source, writes = LoggedSource(tmp_path, log), GatedWrites(log)
    writes.release.set()
    sync = chunked(source, writes, read_ahead=read_ahead, processes=2)
    plan = Planner("articles", chunk_max_files=CHUNK).plan(source.snapshot(REPO), Known({}, {}))
    sync.run(1, REPO, plan, Known({}, {}), UNLIMITED)

    fetches = [i for i, (kind, _) in enumerate(log.events) if kind == "fetch"]
    assert len(fetches) == ARTICLES // CHUNK
    for number, at in enumerate(fetches[2:], start=2):
        committed = {path for kind, paths in log.events[:at] if kind == "commit" for path in paths}
        two_back = set(log.events[fetches[number - 2]][1])
        assert two_back <= committed, (
            f"chunk {number + 1} was downloaded before chunk {number - 1} was written"
        )
    if not read_ahead:
        # the sequential path: each chunk downloaded only once the one before is written
        for number, at in enumerate(fetches[1:], start=1):
            committed = {path for kind, paths in log.events[:at] if kind == "commit" for path in paths}
            assert set(log.events[fetches[number - 1]][1]) <= committed


def test_an_error_in_the_reading_is_raised_by_the_writes_and_ends_the_render_processes(
    tmp_path: Path,
) -> None:
    repository(tmp_path)
    log = Log()

    class FailingSource(LoggedSource):
        def fetch_stream(
            self, repo: RepoRef, snapshot: Snapshot, files: Sequence[RepoFile], **kw: Any
        ) -> Iterator[FetchResult]:
            if any(kind == "fetch" for kind, _ in self.log.events):
                raise OSError("the second download failed")
            yield from super().fetch_stream(repo, snapshot, files, **kw)

    source, writes = FailingSource(tmp_path, log), GatedWrites(log)
    writes.release.set()
    sync = chunked(source, writes, read_ahead=True, processes=2)
    plan = Planner("articles", chunk_max_files=CHUNK).plan(source.snapshot(REPO), Known({}, {}))
    with pytest.raises(OSError, match="the second download failed"):
        sync.run(1, REPO, plan, Known({}, {}), UNLIMITED)
    # the first chunk was committed before the error surfaced; nothing of the second
    committed = [path for kind, paths in log.events if kind == "commit" for path in paths]
    assert committed == [f"articles/a{i:03}.md" for i in range(CHUNK)]


@pytest.mark.parametrize("processes", [1, 2])
def test_rendering_starts_on_the_first_files_while_the_rest_are_still_being_read(
    tmp_path: Path, processes: int
) -> None:
    # GIVEN a chunk of 20 files from a source that gives them one at a time
    repository(tmp_path)
    source = LoggedSource(tmp_path, Log())
    reader = ChunkReader(
        source,
        articles_dir="articles",
        allow_raw_html=False,
        timezone=None,
        asset_base_url=None,
        render_processes=processes,
    )
    plan = Planner("articles", chunk_max_files=CHUNK).plan(source.snapshot(REPO), Known({}, {}))
    chunk = Chunk(fetched=CHUNK)
    with reader.parser() as parser:
        # WHEN the chunk's first article is taken
        articles = reader.articles(REPO, plan, plan.chunks[0], UNLIMITED, parser, chunk)
        first = next(articles)
        given_by_then = len(source.given)
        rest = list(articles)

    # THEN it was rendered when only the files the render processes had in hand were read
    assert first.slug == "a000"
    assert given_by_then <= max(processes, 1) * 2
    # and the whole chunk still came, in order
    assert [a.slug for a in (first, *rest)] == [f"a{i:03}" for i in range(CHUNK)]
    assert chunk.parsed == CHUNK
