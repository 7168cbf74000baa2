"""The first sync of a real-shaped repository (``real_corpus``): the earlier commit's sequential path,
this commit's sequential path and its parallel path in the same run, this commit's two outputs compared
byte for byte, and the parallel path's peak memory.

*Earlier* is the code of ``earlier.EARLIER_COMMIT``, before the render pool, the read-ahead and the render
cuts (``bench.earlier``). *Sequential* is this commit's worker with ``RENDER_PROCESSES=1`` and no
read-ahead: every chunk downloaded, rendered in this process and written, one after the other.
*Parallel* is the default: rendering in one worker process per CPU (``os.sched_getaffinity``), the next
chunk read while this one is written.

Memory is the proportional set size (PSS, shared pages split between the processes that share them)
of this process and its render processes together, sampled every 100 ms while the sync runs, above its
level before the sync (as tracemalloc's figures are above theirs): what the sync adds to a Lambda
environment's memory, children included (tracemalloc sees only this process's heap).
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bench import earlier as earlier_mod
from bench import real_corpus
from bench.earlier import Earlier
from bench.measure import Measured
from bench.ours import run_push
from bench.rig import Rig
from function.store.backends import open_database
from function.store.connection import connection
from tests.kit.github_fixtures import GitHubClientParts

SEQUENTIAL: dict[str, Any] = {"render_processes": 1, "read_ahead": False}
T = TypeVar("T")
# Reading smaps_rollup walks the page tables: at 20 ms it cost the measured process tens of seconds
# of CPU over a 2,000-article sync. Peaks last seconds (a transaction, a chunk), so 100 ms sees them.
_SAMPLE_S = 0.1


@dataclass
class RealShaped:
    n: int
    corpus_mb: float
    earlier: Earlier | None  # the earlier commit's first sync (None: not compared)
    sequential: Measured | None
    parallel: Measured
    processes: int
    identical: bool | None  # parallel's stored articles byte for byte the sequential's (None: not compared)
    peak_pss_bytes: int | None
    # CPU seconds the parallel sync's render processes used (they are waited for when the sync ends):
    # the work more CPUs divide.
    render_cpu_s: float = 0.0


def measure(
    rig: Rig, parts: GitHubClientParts, n: int, *, compare: bool, sample_memory: bool, repeats: int = 1
) -> RealShaped:
    """Seed an N-article real-shaped repository and first-sync it (sequentially too, with ``compare``).

    With ``compare``, the earlier commit's first sync and the parallel one take turns ``repeats`` times
    and the median of each is kept: this shared machine's speed drifts by a fifth from minute to minute,
    and a ratio of two single runs taken a minute apart measured the drift as much as the code."""
    from function.articles.parallel_parse import process_count

    repository = f"octo/real-{n}"
    files = real_corpus.repository(n)
    rig.github.set_files(files, repo=repository)
    _prewarm_tarball(rig, parts, repository)
    sequential: Measured | None = None
    earlier: Earlier | None = None
    names = {
        "parallel": f"bench_real_par_{n}",
        "sequential": f"bench_real_seq_{n}",
        "earlier": f"bench_real_earlier_{n}",
    }
    try:
        earliers: list[Earlier] = []
        parallels: list[tuple[Measured, float]] = []
        for _ in range(repeats if compare else 1):
            if compare:
                earliers.append(earlier_mod.first_sync(rig, repository, names["earlier"]))
            # The parallel path runs before this commit's sequential one: the sequential path renders
            # in this process, and the render processes would inherit what it cached (this corpus's
            # formulas, its code's token markup) and start warmer than a function meeting it first.
            rig.fresh_database(names["parallel"], repository)
            children_before = _children_cpu_s()
            with _pss_sampler(enabled=sample_memory) as peak:
                run = _first_sync(rig, parts, names["parallel"], repository, {})
            parallels.append((run, _children_cpu_s() - children_before))
        parallel, render_cpu_s = _median(parallels, key=lambda p: p[0].wall_ms)
        if earliers:
            earlier = _median(earliers, key=lambda e: e.measured.wall_ms if e.measured else 0.0)
        if compare:
            rig.fresh_database(names["sequential"], repository)
            sequential = _first_sync(rig, parts, names["sequential"], repository, SEQUENTIAL)
        identical = _same_articles(rig, names["sequential"], names["parallel"]) if compare else None
    finally:
        for name in names.values():
            rig.drop_database(name)
    return RealShaped(
        n=n,
        earlier=earlier,
        corpus_mb=sum(len(v) for k, v in files.items() if k.startswith("articles/")) / 1e6,
        sequential=sequential,
        parallel=parallel,
        processes=process_count(None),
        identical=identical,
        peak_pss_bytes=peak[0] if sample_memory else None,
        render_cpu_s=render_cpu_s,
    )


def _first_sync(
    rig: Rig, parts: GitHubClientParts, name: str, repository: str, options: dict[str, Any]
) -> Measured:
    db = open_database(rig.relayed_url(name))
    try:
        measured = run_push(rig, parts.source, db, repository, f"first-{name}", worker_options=options)
    finally:
        db.close()
    if measured.notes.get("written") != measured.notes.get("processed"):
        raise RuntimeError(f"{name}: not every article was written: {measured.notes}")
    return measured


def _median(items: list[T], key: Callable[[T], float]) -> T:
    """The middle item by ``key`` (the lower middle of an even count: a run that happened)."""
    return sorted(items, key=key)[(len(items) - 1) // 2]


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's children that have ended and been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _same_articles(rig: Rig, first: str, second: str) -> bool:
    """Whether two databases hold the same articles: every slug's Markdown, HTML, title and tags."""
    rows = []
    for name in (first, second):
        db = open_database(rig.direct_url(name))
        with connection(db):
            cursor = db.execute_sql(
                "SELECT slug, title, content, content_html, content_hash, tags_hash, publish FROM articles "
                "JOIN article_bodies ON article_bodies.article_id = articles.id ORDER BY slug"
            )
            rows.append(cursor.fetchall())
        db.close()
    return bool(rows[0]) and rows[0] == rows[1]


@contextlib.contextmanager
def _pss_sampler(*, enabled: bool) -> Iterator[list[int]]:
    """The peak of (this process + its children)'s PSS while the block runs, in ``peak[0]`` (bytes)."""
    peak = [0]
    if not enabled:
        yield peak
        return
    stop = threading.Event()

    base = _pss_tree(os.getpid())

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _pss_tree(os.getpid()) - base)
            stop.wait(_SAMPLE_S)

    sampler = threading.Thread(target=sample, name="pss-sampler", daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stop.set()
        sampler.join()


def _pss_tree(pid: int) -> int:
    """PSS of ``pid`` and of its children running the same program (the render processes, not the
    throwaway MariaDB), in bytes; 0 for what has ended."""
    total = _pss(pid)
    program = os.readlink(f"/proc/{pid}/exe")
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                if os.readlink(f"/proc/{child}/exe") == program:
                    total += _pss(int(child))
    return total


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _prewarm_tarball(rig: Rig, parts: GitHubClientParts, repository: str) -> None:
    """Have the stand-in (in this process) build the head's tarball before anything is measured: its
    gzip and its copy of the archive are GitHub's work, not the sync's time or memory."""
    token = parts.auth.installation_token(1)
    head = rig.github.head(repo=repository)
    answer = parts.http.request(
        "GET",
        f"{rig.github.url}/repos/{repository}/tarball/{head}",
        headers={"Authorization": f"Bearer {token}"},
    )
    if answer.status != 200:
        raise RuntimeError(f"could not prewarm the tarball: {answer.status}")
