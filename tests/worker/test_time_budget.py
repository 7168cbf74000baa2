"""A delivery's time budget: the worker reads and commits changed files in chunks, starts no chunk it
could not commit before the deadline, says which files it left, and the retry reads only those.

The clock is fake: the source advances it by a cost per fetched file, and the Deadline reads it."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest

from function.aws.deadline import Deadline
from function.aws.dispatch import dispatch
from function.errors import PassThroughFailed
from function.sources.port import FetchedFile, FetchResult, RepoFile, RepoRef, Snapshot
from function.store.batching import TRANSACTION_MAX_ARTICLES, TRANSACTION_MAX_BYTES, article_bytes
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync import Worker
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.deliveries import delivery_uuid, github_headers
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.worker.test_bounded_transactions import RecordingStore


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CostlySource:
    """A source whose every fetched file costs ``per_file_s`` on the fake clock (and each chunk
    ``per_chunk_s``); records the size of each fetch."""

    def __init__(self, source: Any, clock: FakeClock, per_file_s: float, per_chunk_s: float = 0.0) -> None:
        self._source = source
        self._clock = clock
        self._per_file_s = per_file_s
        self._per_chunk_s = per_chunk_s
        self.fetches: list[int] = []

    def snapshot(self, repo: RepoRef) -> Snapshot:
        return self._source.snapshot(repo)

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        self.fetches.append(len(files))
        self._clock.now += self._per_file_s * len(files) + self._per_chunk_s
        return self._source.fetch(repo, snapshot, files, wanted_in_all=wanted_in_all)


def _push(blog: Blog) -> PushRef:
    return PushRef(REPO, "main", INSTALLATION_ID, after=blog.github.head(repo=REPO))


def test_a_deadline_after_the_first_chunk_keeps_it_and_the_retry_reads_the_rest(
    blog: Blog, caplog: pytest.LogCaptureFixture
) -> None:
    blog.commit({f"articles/a{i:02}.md": article(f"A{i}") for i in range(10)})
    clock = FakeClock()
    source = CostlySource(blog.source, clock, per_file_s=10.0)
    info = DeliveryInfo(delivery_id="d-budget", event="push", received_at=datetime(2026, 12, 3))

    # 60 s left; a chunk of 4 files takes 40 s, so a second one (margin 10 s + 40 s) does not fit.
    with caplog.at_level(logging.WARNING, logger="function.worker.sync"), blog.store() as store:
        worker = Worker(store, source, chunk_max_files=4, commit_margin_s=10.0)
        summary = worker.process_push(info, _push(blog), deadline=Deadline(clock.now + 60, clock))
        record = store.get_delivery("d-budget")

    assert source.fetches == [4]
    assert summary.fetched == 4 and summary.succeeded == 4 and summary.failed == 0
    assert summary.left == [f"articles/a{i:02}.md" for i in range(4, 10)]
    assert summary.retryable and summary.outcome == "failed"
    assert len(blog.articles()) == 4  # the first chunk is committed and served
    assert record is not None and record.outcome == "failed"
    assert record.error is not None and "6 files left for the next run" in record.error
    assert "articles/a09.md" in record.error and "[retryable]" not in record.error
    assert record.retryable  # what a replay of this head is judged by
    [line] = [r for r in caplog.records if r.getMessage().startswith("Time budget reached")]
    assert line.left == 6 and "articles/a04.md" in line.left_paths  # type: ignore[attr-defined]

    # Lambda's retry: the same delivery, a new invocation with its own budget.
    with blog.store() as store:
        worker = Worker(store, source, chunk_max_files=4, commit_margin_s=10.0)
        again = worker.process_push(info, _push(blog), deadline=Deadline(clock.now + 300, clock))
        record = store.get_delivery("d-budget")

    assert source.fetches == [4, 4, 2]  # only the six left over
    assert again.left == [] and again.outcome == "success" and again.succeeded == 10
    assert len(blog.articles()) == 10
    assert record is not None and record.outcome == "success"


def test_through_the_handler_a_spent_budget_answers_5xx_and_the_retry_finishes(blog: Blog) -> None:
    """The Lambda context's remaining time reaches the worker through the pass-through: with less left
    than the commit margin nothing is read, /events answers 503 (Lambda retries), the record says so."""

    class Context:
        def __init__(self, millis: int) -> None:
            self.millis = millis

        def get_remaining_time_in_millis(self) -> int:
            return self.millis

    blog.commit({f"articles/h{i}.md": article(f"H{i}") for i in range(3)})
    app = blog.lambda_app()
    body = blog.push_body()
    accepted = app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="d-ctx")
    )
    assert accepted.status_code == 202
    event = json.loads(blog.invoker.payloads[-1])
    with pytest.raises(PassThroughFailed, match=r"503.*3 changed files left"):
        dispatch(app, event, Context(5_000))  # 5 s left: under the 15 s commit margin
    with blog.store() as store:
        record = store.get_delivery(delivery_uuid("d-ctx"))
    assert record is not None and record.outcome == "failed" and "3 files left" in (record.error or "")
    assert blog.articles() == []

    answer = dispatch(app, event, Context(300_000))
    assert answer["statusCode"] == 200 and answer["body"]["succeeded"] == 3
    assert len(blog.articles()) == 3


class GeneratedSource:
    """A repository of ``count`` generated articles of about 2.9 KB (a 5.75 KB row with the HTML: the
    115 MB first sync at 20,000), without a stand-in: the point is the worker's chunks and transactions."""

    def __init__(self, count: int, clock: FakeClock, per_file_s: float, per_chunk_s: float) -> None:
        self._files = {
            f"articles/g{i:05}.md": article(f"G{i}", tags=("bench",), body=f"Body {i}. " + "x" * 2700)
            for i in range(count)
        }
        self._clock = clock
        self._per_file_s = per_file_s
        self._per_chunk_s = per_chunk_s
        self.fetches: list[int] = []

    def snapshot(self, repo: RepoRef) -> Snapshot:
        files = tuple(RepoFile(p, f"{i:040x}", len(c)) for i, (p, c) in enumerate(self._files.items()))
        return Snapshot("f" * 40, files)

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        self.fetches.append(len(files))
        self._clock.now += self._per_file_s * len(files) + self._per_chunk_s
        return [FetchedFile(f.path, f.sha, self._files[f.path]) for f in files]


# The modelled cost of one changed file on a first sync, deliberately slow: 5.5 ms a file and 2 s a chunk
# (its tarball download). This test's real parse and commit take about 0.6 ms a file here (12.6 s for the
# 20,000 on MariaDB, 9 s on SQLite, 2 loaded cores). At the stack's default 300 s time-out the 150 s
# modelled fit in one invocation; at 60 s they take four.
PER_FILE_S = 0.0055
PER_CHUNK_S = 2.0
TIMEOUT_S = 60.0  # a function configured with a 60 s time-out (the stack's default is 300 s)


def test_a_20000_article_first_sync_stays_in_bounded_transactions_over_several_invocations(
    blog: Blog,
) -> None:
    clock = FakeClock()
    source = GeneratedSource(20_000, clock, PER_FILE_S, PER_CHUNK_S)
    invocations = 0
    summary = None
    with blog.store() as store:
        recording = RecordingStore(store)
        while summary is None or summary.left:
            invocations += 1
            assert invocations <= 5
            worker = Worker(recording, source, clock=lambda: datetime(2026, 12, 3))
            summary = worker.sync_user(USER, deadline=Deadline(clock.now + TIMEOUT_S, clock))

    assert summary.succeeded == 20_000
    assert sum(source.fetches) == 20_000  # every file read once, none again on a later invocation
    assert max(source.fetches) <= TRANSACTION_MAX_ARTICLES  # one chunk's contents held at a time
    written = [b for b in recording.batches if b]
    assert sum(len(b) for b in written) == 20_000
    assert max(len(b) for b in written) <= TRANSACTION_MAX_ARTICLES
    assert max(sum(article_bytes(a) for a in b) for b in written) <= TRANSACTION_MAX_BYTES
    # 20 chunks of 7.5 s modelled: 5 fit in 60 s with the 15 s margin, so four invocations.
    assert invocations == 4


def test_a_first_sync_in_chunks_still_reads_by_tarball_and_a_small_tail_by_blob(blog: Blog) -> None:
    """Most of the repository wanted, one chunk at a time: each chunk of more than 50 files comes from
    the tarball (one chunk alone would be under half the repository), the 5-file tail by blob."""
    blog.commit({f"articles/t{i:03}.md": article(f"T{i}") for i in range(125)})

    with blog.store() as store:
        summary = Worker(store, blog.source, chunk_max_files=60).sync_user(USER)

    assert summary.succeeded == 125 and summary.fetched == 125
    # each tarball is the API's redirect and the download
    assert blog.github.count("tarball") == 2 and blog.github.count("codeload") == 2, blog.github.counts()
    assert blog.github.count("blob") == 5
