"""The benchmark's cases, in order, on one rig: for each article count N, the first sync, a push that changes
nothing and a push that changes one article, ours and the baseline on the same commits; then ours again
for memory; then the accept path and the cold import.

Ours is timed ``repeats`` times (median), each time from an empty database; the baseline once (its runs
last minutes and noise is a small part of them). Memory is measured in a separate, untimed pass, because
tracemalloc slows allocation down.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import peewee

from bench import baseline as baseline_mod
from bench import corpus, ours, read_bytes, real_shaped
from bench.accept import AcceptTimes, fake_aws_environment, lambda_api, measure_accept, quiet
from bench.coldstart import ColdAccept, cold_accepts, import_ms
from bench.measure import Measured
from bench.reads import ReadResults, measure_front_end, measure_reads
from bench.real_shaped import RealShaped
from bench.rig import Rig, running_rig
from bench.search import SearchBench, measure_search
from function.store.backends import open_database
from function.store.connection import connection
from tests.kit.github_fixtures import GitHubClientParts

CASES = ("first sync", "no-change push", "one-article push")
CHANGED_ARTICLE = 7  # the article the one-article push edits


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...] = (112, 1000)
    github_ms: float = 50.0
    db_ms: float = 35.0
    accept_calls: int = 200
    cold_runs: int = 5
    repeats: int = 3
    read_calls: int = 50
    real_sizes: tuple[int, ...] = (500, 2000)  # real-shaped first syncs: the first compared, the last sampled
    front_end_size: int = 5000  # the original front end's list, filter and facet calls (0: skipped)
    bytes_size: int = 5000  # real-shaped articles of the bytes-read cases (0: skipped)
    search_sizes: tuple[int, ...] = (500, 5000)  # search blogs: the first synced, the others written


@dataclass
class CaseResult:
    case: str
    n: int
    ours: Measured
    ours_runs_ms: list[float]
    baseline: Measured
    peak_bytes: int | None = None

    @property
    def ours_ms(self) -> float:
        return statistics.median(self.ours_runs_ms)

    @property
    def ratio(self) -> float:
        return self.baseline.wall_ms / self.ours_ms if self.ours_ms else float("inf")


@dataclass
class Results:
    options: Options
    cases: list[CaseResult] = field(default_factory=list)
    accept: dict[int, AcceptTimes] = field(default_factory=dict)
    import_ms: float = 0.0
    reads: dict[int, ReadResults] = field(default_factory=dict)
    front_end: dict[int, ReadResults] = field(default_factory=dict)
    cold: list[ColdAccept] = field(default_factory=list)
    real: list[RealShaped] = field(default_factory=list)
    bytes_read: list[read_bytes.ByteCase] = field(default_factory=list)
    search: list[SearchBench] = field(default_factory=list)


Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(options: Options, progress: Progress = _stderr) -> Results:
    results = Results(options)
    with running_rig(options.github_ms / 1000, options.db_ms / 1000) as rig:
        for n in options.sizes:
            cases, reads = _run_size(rig, n, options, progress)
            results.cases += cases
            results.reads[n] = reads
        if options.front_end_size:
            n = options.front_end_size
            progress(
                f"N={n} the front end's pages by number and tag facets: {options.read_calls} calls per case"
            )
            results.front_end[n] = measure_front_end(rig, n, options.read_calls)
        parts = rig.github_client()
        try:
            for number, n in enumerate(options.real_sizes):
                compare, sample = number == 0, number == len(options.real_sizes) - 1
                progress(
                    f"real-shaped N={n}: first sync"
                    + (
                        f", earlier and parallel taking turns {options.repeats} times, sequential"
                        if compare
                        else ""
                    )
                )
                results.real.append(
                    real_shaped.measure(
                        rig, parts, n, compare=compare, sample_memory=sample, repeats=options.repeats
                    )
                )
            if options.bytes_size:
                n = options.bytes_size
                progress(f"real-shaped N={n}: bytes read by a no-change push, a list page, an article")
                results.bytes_read = read_bytes.measure(rig, parts, n)
            for number, n in enumerate(options.search_sizes):
                progress(
                    f"search N={n}: "
                    + ("first sync, index rebuilt alone, no-change push, " if number == 0 else "")
                    + f"{options.read_calls} queries"
                )
                results.search.append(
                    measure_search(
                        rig,
                        parts,
                        n,
                        options.read_calls,
                        sync=number == 0,
                        prewarm=lambda repository: _prewarm_tarball(rig, parts, repository),
                    )
                )
        finally:
            parts.http.close()
    progress("accept path: moto's Lambda API on loopback")
    with fake_aws_environment(), quiet(), lambda_api() as url:
        results.accept = measure_accept(options.sizes, options.accept_calls, url)
        if options.cold_runs:
            progress("cold accept from the Lambda zip (python3.12, without and with bytecode)")
            results.cold = cold_accepts(url, runs=options.cold_runs)
    progress("cold import of function.handler")
    results.import_ms = import_ms()
    return results


class _Databases:
    """The relayed databases of one N, kept open across runs as a warm Lambda keeps its bound database."""

    def __init__(self, rig: Rig) -> None:
        self._rig = rig
        self._open: dict[str, peewee.Database] = {}

    def get(self, name: str) -> peewee.Database:
        if name not in self._open:
            self._open[name] = open_database(self._rig.relayed_url(name))
        return self._open[name]

    def disconnect(self, name: str) -> None:
        """Close the connection kept on ``name`` (the next job connects again, as a cold one does)."""
        if name in self._open:
            self._open[name].close()

    def close(self) -> None:
        for db in self._open.values():
            db.close()


def _run_size(rig: Rig, n: int, options: Options, progress: Progress) -> tuple[list[CaseResult], ReadResults]:
    repository = f"octo/blog-{n}"
    rig.github.set_files(corpus.repository(n), repo=repository)
    parts = rig.github_client()
    parts.auth.installation_token(1)  # a warm Lambda has its installation token cached
    old = baseline_mod.Baseline(parts.auth, parts.http, rig.github.url)
    ours_db, base_db = f"bench_ours_{n}", f"bench_baseline_{n}"
    rig.fresh_database(base_db, repository)
    direct = open_database(rig.direct_url(base_db))
    with connection(direct):
        baseline_mod.create_table(direct)
    direct.close()

    databases = _Databases(rig)
    try:
        runs: dict[str, list[Measured]] = {case: [] for case in CASES}
        baseline_runs: dict[str, Measured] = {}
        for attempt in range(options.repeats):
            databases.disconnect(ours_db)  # its kept connection would sit in the dropped database
            rig.fresh_database(ours_db, repository)
            for case in CASES:
                _commit_for(rig, repository, n, case, revision=attempt + 1)
                _prewarm_tarball(rig, parts, repository)
                progress(f"N={n} {case}: ours (run {attempt + 1}/{options.repeats})")
                delivery = f"{case}-{attempt}"
                runs[case].append(
                    ours.run_push(rig, parts.source, databases.get(ours_db), repository, delivery)
                )
                if attempt == 0:
                    progress(f"N={n} {case}: baseline")
                    baseline_runs[case] = old.run_push(rig, databases.get(base_db), repository)

        peaks: dict[str, int | None] = {}
        databases.disconnect(ours_db)
        rig.fresh_database(ours_db, repository)
        for case in CASES:
            _commit_for(rig, repository, n, case, revision=options.repeats + 1)
            _prewarm_tarball(rig, parts, repository)
            progress(f"N={n} {case}: ours, memory traced")
            traced = ours.run_push(
                rig, parts.source, databases.get(ours_db), repository, f"{case}-mem", trace_memory=True
            )
            peaks[case] = traced.peak_bytes
        progress(f"N={n} read path: {options.read_calls} calls per case")
        reads = measure_reads(rig, databases.get(ours_db), ours_db, n, options.read_calls)
    finally:
        databases.close()
        parts.http.close()
        for name in (ours_db, base_db):
            rig.drop_database(name)  # a server given by TEST_DATABASE_URL outlives the run
    return [
        CaseResult(
            case=case,
            n=n,
            ours=runs[case][0],
            ours_runs_ms=[m.wall_ms for m in runs[case]],
            baseline=baseline_runs[case],
            peak_bytes=peaks[case],
        )
        for case in CASES
    ], reads


def _commit_for(rig: Rig, repository: str, n: int, case: str, *, revision: int) -> None:
    """Move the branch for ``case``: the first sync takes the head as it is; the no-change push touches a
    file that is not an article; the one-article push edits one article."""
    if case == "no-change push":
        rig.github.update_files({"README.md": f"# My blog, revision {revision}\n".encode()}, repo=repository)
    elif case == "one-article push":
        i = min(CHANGED_ARTICLE, n - 1)
        changed = {corpus.path(i): corpus.article(i, revision)}
        rig.github.update_files(changed, repo=repository)


def _prewarm_tarball(rig: Rig, parts: GitHubClientParts, repository: str) -> None:
    """Have the stand-in build the head's tarball now: it runs in this process, and its gzip would
    otherwise be charged to our worker's time (GitHub builds archives on its own machines)."""
    token = parts.auth.installation_token(1)
    head = rig.github.head(repo=repository)
    answer = parts.http.request(
        "GET",
        f"{rig.github.url}/repos/{repository}/tarball/{head}",
        headers={"Authorization": f"Bearer {token}"},
    )
    if answer.status != 200:
        raise RuntimeError(f"could not prewarm the tarball: {answer.status}")
