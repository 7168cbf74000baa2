"""The benchmark's table, the performance targets checked against it, and the docs' benchmark page."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.read_bytes import LIST_PAGE, NO_CHANGE_PUSH, ByteCase
from bench.reads import FILTERED_PAGE, NUMBERED_PAGE, TAG_FACETS
from bench.real_shaped import RealShaped
from bench.runner import CaseResult, Results

MB = 1024 * 1024
# The cold accept before the cuts (boto3 imported on the first accept), p50 of 3 fresh python3.12 from
# the unpacked zip on the machine of docs/performance.md: the bar the "<= 60%" target is measured against.
COLD_BASELINE_MS = {False: 8640.0, True: 2509.0}


@dataclass(frozen=True)
class Target:
    name: str
    met: bool
    figure: str


def table(results: Results) -> str:
    """One Markdown table: the sync cases, the accept path and the cold import."""
    head = [
        "case",
        "N",
        "wall ms (ours / baseline)",
        "ratio",
        "GitHub requests (ours / baseline)",
        "DB round trips (ours / baseline)",
        "peak memory (ours)",
    ]
    rows = [_case_row(c) for c in results.cases]
    by_case = {(c.case, c.n): c for c in results.cases}
    for n, times in results.accept.items():
        # The previous design answered GitHub only once it had processed the push: its accept time was
        # its sync time (the one-article push, the common push).
        old = by_case.get(("one-article push", n))
        baseline = f" / {old.baseline.wall_ms:.0f}" if old else ""
        ratio = f"{old.baseline.wall_ms / times.p99_ms:.0f}x" if old and times.p99_ms else ""
        rows.append(
            [
                "accept path (p50 / p99)",
                str(n),
                f"{times.p50_ms:.1f} / {times.p99_ms:.1f} (of {times.calls}){baseline}",
                ratio,
                "0" + (f" / {old.baseline.github_requests}" if old else ""),
                "0" + (f" / {old.baseline.db_round_trips}" if old else ""),
                "",
            ]
        )
    for n, reads in [*results.reads.items(), *results.front_end.items()]:
        for t in reads.times:
            rows.append(
                [
                    f"{t.case} (p50 / p99)",
                    str(n),
                    f"{t.p50_ms:.1f} / {t.p99_ms:.1f} (of {t.calls})",
                    "",
                    "0",
                    f"{t.db_round_trips} ({t.db_connections} connect)",
                    f"answer {t.answer_bytes / 1024:.1f} KB",
                ]
            )
        rows.append(
            [
                "read: largest answer",
                str(n),
                "",
                "",
                "",
                "",
                f"{reads.largest_bytes / 1024:.1f} KB ({reads.largest_route})",
            ]
        )
    rows += _real_rows(results)
    rows += _search_rows(results)
    rows.append(["import function.handler", "", f"{results.import_ms:.0f}", "", "", "", ""])
    for cold in results.cold:
        kind = "with bytecode" if cold.bytecode else "without bytecode"
        before = COLD_BASELINE_MS[cold.bytecode]
        rows.append(
            [
                f"cold accept, zip, {kind} (import + first push)",
                "",
                f"{cold.import_ms:.0f} + {cold.accept_ms:.0f} = {cold.total_ms:.0f} / {before:.0f}",
                f"{cold.total_ms / before:.0%}",
                "",
                "",
                "",
            ]
        )
    text = _markdown_table(head, rows)
    if results.bytes_read:
        text += "\n\n" + bytes_table(results.bytes_read)
    return text


def _markdown_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    lines = [_line(head, widths), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [_line(row, widths) for row in rows]
    return "\n".join(lines)


def bytes_table(cases: list[ByteCase]) -> str:
    """What each case read from the database: rows read as TiDB would read them (estimated, see
    ``bench.read_bytes``), its Request Units, the result bytes the server sent, and the body rows."""
    head = ["case", "N", "rows read (TiDB estimate)", "RU", "result bytes", "statements", "body rows read"]
    rows = [
        [
            c.case,
            str(c.n),
            f"{c.bytes_read / 1000:.1f} KB",
            f"{c.request_units:.1f}",
            f"{c.result_bytes / 1000:.1f} KB",
            str(len(c.statements)),
            str(c.body_rows_read),
        ]
        for c in cases
    ]
    return _markdown_table(head, rows)


def _real_rows(results: Results) -> list[list[str]]:
    """The real-shaped first syncs: parallel / sequential where both ran (the ratio is sequential's time
    over parallel's), with the parallel path's peak PSS (it and its render processes)."""
    rows = []
    for r in results.real:
        seq = r.sequential
        wall = f"{r.parallel.wall_ms:.0f}" + (f" / {seq.wall_ms:.0f}" if seq else "")
        rows.append(
            [
                f"first sync, real-shaped ({r.corpus_mb:.0f} MB), {r.processes} processes"
                + (" / sequential" if seq else ""),
                str(r.n),
                wall,
                f"{seq.wall_ms / r.parallel.wall_ms:.2f}x" if seq else "",
                f"{r.parallel.github_requests}" + (f" / {seq.github_requests}" if seq else ""),
                f"{r.parallel.db_round_trips}" + (f" / {seq.db_round_trips}" if seq else ""),
                f"{r.peak_pss_bytes / MB:.1f} MB PSS" if r.peak_pss_bytes is not None else "",
            ]
        )
        if r.earlier is not None:
            rows.append(_earlier_row(r))
    return rows


def _search_rows(results: Results) -> list[list[str]]:
    """The search: each size's query times and index, then the synced size's first sync and
    no-change push with the index."""
    rows = []
    for s in results.search:
        t = s.query
        first, asked = s.title_first
        rows.append(
            [
                "search: lexical query, real-shaped ja/en (p50 / p99)",
                str(s.n),
                f"{t.p50_ms:.1f} / {t.p99_ms:.1f} (of {t.calls})",
                "",
                "0",
                f"{t.db_round_trips} ({t.db_connections} connect)",
                f"index {s.index_rows:,} rows ({s.entries:,} entries), {s.index_bytes / MB:.1f} MB "
                f"(articles {s.articles_bytes / MB:.1f} MB); title first {first}/{asked}",
            ]
        )
        if s.first_sync is not None and s.index_ms is not None and s.overhead is not None:
            rows.append(
                [
                    "search: first sync with its index / the index alone",
                    str(s.n),
                    f"{s.first_sync.wall_ms:.0f} / {s.index_ms:.0f}",
                    f"+{s.overhead:.0%}",
                    f"{s.first_sync.github_requests}",
                    f"{s.first_sync.db_round_trips}",
                    "",
                ]
            )
        if s.no_change is not None:
            rows.append(
                [
                    "search: no-change push (statements on the index)",
                    str(s.n),
                    f"{s.no_change.wall_ms:.0f}",
                    "",
                    f"{s.no_change.github_requests}",
                    f"{s.no_change.db_round_trips} ({s.no_change_search_statements})",
                    "",
                ]
            )
    return rows


def _earlier_row(r: RealShaped) -> list[str]:
    """The earlier commit's sequential first sync of the same corpus (the ratio is its time over the
    parallel path's)."""
    assert r.earlier is not None
    name = f"first sync, real-shaped ({r.corpus_mb:.0f} MB), commit {r.earlier.commit[:7]}, sequential"
    m = r.earlier.measured
    if m is None:
        return [name, str(r.n), f"not run: {r.earlier.reason}", "", "", "", ""]
    return [
        name,
        str(r.n),
        f"{m.wall_ms:.0f}",
        f"{m.wall_ms / r.parallel.wall_ms:.2f}x",
        str(m.github_requests),
        str(m.db_round_trips),
        "",
    ]


def _case_row(c: CaseResult) -> list[str]:
    peak = f"{c.peak_bytes / MB:.1f} MB" if c.peak_bytes is not None else ""
    return [
        c.case,
        str(c.n),
        f"{c.ours_ms:.0f} / {c.baseline.wall_ms:.0f}",
        f"{c.ratio:.1f}x",
        f"{c.ours.github_requests} / {c.baseline.github_requests}",
        f"{c.ours.db_round_trips} / {c.baseline.db_round_trips}",
        peak,
    ]


def _line(cells: list[str], widths: list[int]) -> str:
    return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)) + " |"


def targets(results: Results) -> list[Target]:
    """The targets that this run's sizes allow checking (the large ones at N=1000)."""
    found: list[Target] = []
    by_case = {(c.case, c.n): c for c in results.cases}
    if (c := by_case.get(("no-change push", 1000))) is not None:
        found.append(Target("no-change push at N=1000 <= 400 ms", c.ours_ms <= 400, f"{c.ours_ms:.0f} ms"))
        turns = c.ours.db_round_trips
        found.append(Target("no-change push: at most 8 DB round trips", turns <= 8, f"{turns}"))
    if (c := by_case.get(("one-article push", 1000))) is not None:
        found.append(Target("one-article push at N=1000 <= 500 ms", c.ours_ms <= 500, f"{c.ours_ms:.0f} ms"))
    if (c := by_case.get(("first sync", 1000))) is not None:
        in_flight = c.ours.github_max_in_flight
        found.append(
            Target(
                "first sync at N=1000 <= 4 s, well under 100 concurrent GitHub requests",
                c.ours_ms <= 4000 and in_flight < 50,
                f"{c.ours_ms / 1000:.1f} s, at most {in_flight} at once",
            )
        )
    for n, floor in ((112, 20), (1000, 100)):
        if (c := by_case.get(("no-change push", n))) is not None:
            found.append(
                Target(f"baseline / ours, no-change, N={n} >= {floor}x", c.ratio >= floor, f"{c.ratio:.0f}x")
            )
    if results.accept:
        p99s = {n: t.p99_ms for n, t in results.accept.items()}
        spread = max(p99s.values()) / max(min(p99s.values()), 1e-9)
        figures = ", ".join(f"N={n}: {p:.1f} ms" for n, p in p99s.items())
        found.append(Target("accept p99 <= 20 ms at every N", max(p99s.values()) <= 20, figures))
        found.append(
            Target("accept p99 independent of N (within 1.5x)", spread <= 1.5, f"spread {spread:.2f}x")
        )
    peaks = [c.peak_bytes for c in results.cases if c.n == 1000 and c.peak_bytes is not None]
    if peaks:
        found.append(
            Target(
                "worker peak memory at N=1000 <= 200 MB", max(peaks) <= 200 * MB, f"{max(peaks) / MB:.1f} MB"
            )
        )
    found += _real_targets(results)
    found += _read_targets(results)
    found += _search_targets(results)
    found.append(
        Target("import function.handler <= 400 ms", results.import_ms <= 400, f"{results.import_ms:.0f} ms")
    )
    for cold in results.cold:
        if cold.bytecode:
            share = cold.total_ms / COLD_BASELINE_MS[True]
            found.append(
                Target(
                    "cold accept from the zip with bytecode <= 60% of before",
                    share <= 0.6,
                    f"{cold.total_ms:.0f} ms = {share:.0%} of {COLD_BASELINE_MS[True]:.0f} ms",
                )
            )
    return found


# The simpler renderer's target for an author's first sync (500 real-shaped articles, 2 cores).
REAL_FIRST_SYNC_S = 15.0


def _real_targets(results: Results) -> list[Target]:
    found: list[Target] = []
    for r in results.real:
        if r.sequential is not None:  # the first real size: the one the time target is set at
            found.append(
                Target(
                    f"first sync of real-shaped N={r.n} <= {REAL_FIRST_SYNC_S:.0f} s on this machine",
                    r.parallel.wall_ms <= REAL_FIRST_SYNC_S * 1000,
                    f"{r.parallel.wall_ms / 1000:.1f} s",
                )
            )
        if r.earlier is not None:
            found.append(_earlier_target(r))
        if r.sequential is not None:
            found.append(
                Target(
                    f"first sync of real-shaped N={r.n}: output identical to the sequential path's",
                    bool(r.identical),
                    "identical" if r.identical else "DIFFERENT",
                )
            )
        if r.peak_pss_bytes is not None:
            found.append(
                Target(
                    f"first sync of real-shaped N={r.n}: peak memory <= 300 MB",
                    r.peak_pss_bytes <= 300 * MB,
                    f"{r.peak_pss_bytes / MB:.0f} MB PSS, render processes included",
                )
            )
    return found


def _earlier_target(r: RealShaped) -> Target:
    """The parallel first sync against the sequential path as it was when the target was set (the
    earlier commit's code, run in this run): parallelism and the render cuts together."""
    assert r.earlier is not None
    name = (
        f"first sync of real-shaped N={r.n} faster than the sequential path "
        f"(commit {r.earlier.commit[:7]}, same run)"
    )
    m = r.earlier.measured
    if m is None:
        return Target(name, False, f"not measured: {r.earlier.reason}")
    share = r.parallel.wall_ms / m.wall_ms
    return Target(
        name, share < 1, f"{r.parallel.wall_ms / 1000:.1f} s / {m.wall_ms / 1000:.1f} s = {share:.2f}"
    )


def _read_targets(results: Results) -> list[Target]:
    """The read path: a page's p99 within two query round trips + 20 ms (the connection's set-up, which
    every Lambda request pays once, shown apart), every answer within 1 MB, and flat in N."""
    found: list[Target] = []
    if not results.reads:
        return found
    db_ms = results.options.db_ms
    pages = {n: next(t for t in r.times if t.case == "read: list page") for n, r in results.reads.items()}
    for n, page in pages.items():
        queries = page.db_round_trips - 3 * page.db_connections  # a connect is 3 round trips
        budget = 2 * db_ms + 20 + 3 * db_ms * page.db_connections
        found.append(
            Target(
                f"list page p99 at N={n} <= 2 round trips + 20 ms (+ the connection's set-up)",
                queries <= 2 and page.p99_ms <= budget,
                f"{page.p99_ms:.0f} ms, {queries} query round trips + {page.db_connections} connect",
            )
        )
    largest = max(r.largest_bytes for r in results.reads.values())
    found.append(
        Target("every read answer <= 1 MB at every N", largest <= MB, f"largest {largest / 1024:.0f} KB")
    )
    p99s = [p.p99_ms for p in pages.values()]
    if len(p99s) > 1:
        spread = max(p99s) / max(min(p99s), 1e-9)
        found.append(Target("list page p99 flat in N (within 1.5x)", spread <= 1.5, f"spread {spread:.2f}x"))
    return found + _front_end_targets(results) + _bytes_targets(results)


# Round trips each front-end call may take besides connecting, and the time allowed beyond them.
FRONT_END_BUDGETS = {NUMBERED_PAGE: (2, 30.0), FILTERED_PAGE: (2, 30.0), TAG_FACETS: (1, 60.0)}


def _front_end_targets(results: Results) -> list[Target]:
    """The original front end's calls: a page with its totals in 2 query round trips, the facets in 1,
    each within those round trips + a margin for the server's and our own work (the connection's set-up,
    paid once per Lambda request, allowed apart)."""
    found: list[Target] = []
    db_ms = results.options.db_ms
    for n, reads in results.front_end.items():
        for t in reads.times:
            trips, margin = FRONT_END_BUDGETS[t.case]
            queries = t.db_round_trips - 3 * t.db_connections  # a connect is 3 round trips
            budget = trips * db_ms + margin + 3 * db_ms * t.db_connections
            found.append(
                Target(
                    f"{t.case.removeprefix('read: ')} at N={n}: <= {trips} round trip{'s' * (trips > 1)}, "
                    f"p99 <= those + {margin:.0f} ms (+ the connection's set-up)",
                    queries <= trips and t.p99_ms <= budget,
                    f"{t.p99_ms:.0f} ms, {queries} query round trips + {t.db_connections} connect",
                )
            )
        found.append(
            Target(
                f"front-end answers <= 1 MB at N={n}",
                reads.largest_bytes <= MB,
                f"largest {reads.largest_bytes / 1024:.0f} KB ({reads.largest_route})",
            )
        )
    return found


# The bytes a case may read from the database (rows read, as TiDB reads them), and the blog's size they
# are set at.
BYTES_LIMITS = {NO_CHANGE_PUSH: 2_000_000, LIST_PAGE: 200_000}
BYTES_AT_N = 5000


def _bytes_targets(results: Results) -> list[Target]:
    found = []
    for c in results.bytes_read:
        limit = BYTES_LIMITS.get(c.case)
        if limit is None:
            continue
        size = "" if c.n >= BYTES_AT_N else f" (run at N={c.n}, below the target's N={BYTES_AT_N})"
        found.append(
            Target(
                f"{c.case.removeprefix('bytes: ')} at N={BYTES_AT_N} real-shaped reads "
                f"<= {limit / 1000:.0f} KB",
                c.bytes_read <= limit and c.n >= BYTES_AT_N,
                f"{c.bytes_read / 1000:.1f} KB rows read, {c.request_units:.1f} RU{size}",
            )
        )
    return found


# A lexical search: its two statements, and this much for the server's and our own work.
SEARCH_ROUND_TRIPS, SEARCH_MARGIN_MS = 2, 50.0
SEARCH_MAX_OVERHEAD = 0.25


def _search_targets(results: Results) -> list[Target]:
    found: list[Target] = []
    db_ms = results.options.db_ms
    for s in results.search:
        t = s.query
        queries = t.db_round_trips - 3 * t.db_connections  # a connect is 3 round trips
        budget = SEARCH_ROUND_TRIPS * db_ms + SEARCH_MARGIN_MS + 3 * db_ms * t.db_connections
        found.append(
            Target(
                f"lexical search p99 at N={s.n} <= {SEARCH_ROUND_TRIPS} round trips + "
                f"{SEARCH_MARGIN_MS:.0f} ms (+ the connection's set-up)",
                queries <= SEARCH_ROUND_TRIPS and t.p99_ms <= budget,
                f"{t.p99_ms:.0f} ms, {queries} query round trips + {t.db_connections} connect",
            )
        )
        if s.overhead is not None:
            found.append(
                Target(
                    f"the search index adds <= {SEARCH_MAX_OVERHEAD:.0%} to a first sync (N={s.n})",
                    s.overhead <= SEARCH_MAX_OVERHEAD,
                    f"+{s.overhead:.0%} ({s.index_ms:.0f} ms of {s.first_sync.wall_ms:.0f} ms)"
                    if s.first_sync is not None
                    else "",
                )
            )
        if s.no_change_search_statements is not None:
            found.append(
                Target(
                    f"no-change push: nothing sent for the search index (N={s.n})",
                    s.no_change_search_statements == 0,
                    f"{s.no_change_search_statements} statements",
                )
            )
    return found


def targets_text(found: list[Target]) -> str:
    return "\n".join(f"- [{'x' if t.met else ' '}] {t.name}: {t.figure}" for t in found)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), Python {sys.version.split()[0]}, {platform.system()}"


def markdown(results: Results, command: str) -> str:
    """The README fragment: how it was run, on what, the table, the targets, and how to read them."""
    o = results.options
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    return f"""## Benchmark

`{command}` ({when}; {machine()}). GitHub stand-in with {o.github_ms:.0f} ms per request, MariaDB behind a
relay adding {o.db_ms:.0f} ms per round trip; ours is the median of {o.repeats} runs, the baseline one run.

{table(results)}

Targets:

{targets_text(targets(results))}

How to read it:

- *ours* is the real worker (`Worker.process_push` with `GitHubSource` and `PeeweeStore`), connecting to
  the database for the job as `/events` does, with the installation token already cached (a warm Lambda).
  *baseline* is the previous design (`bench/baseline.py`): Contents API listing, every file through the
  Contents API (8 at a time), and two SELECTs and one upsert per article, on the same stand-in, database,
  relay and parser.
- *DB round trips* are counted by the relay: every request/response turn, connection set-up included
  (TCP connect, authentication and PyMySQL's `SET NAMES` are 3). *GitHub requests* are every request the
  stand-in answered (the tarball is two: the API's redirect and the download).
- *peak memory* is tracemalloc's peak of the Python heap during a separate, untimed run of the same case.
- The accept path is the real app in Lambda mode, its `LambdaInvoker` sending `InvocationType=Event` to
  moto's Lambda API on loopback (docker off), timed through the WSGI test client after 10 warm-up calls,
  the sizes taking turns call by call; the delivery lists all N paths under `added`. Its baseline is the
  baseline's one-article push: the previous design answered GitHub only after processing the push, so
  that was its accept time (the ratio is against our p99).
- The import time is `python -X importtime -c "import function.handler"`: the cumulative time of the
  imports it triggers (interpreter start-up excluded), median of 5.
- The cold accept is a fresh `python3.12` (the runtime's version) in the unpacked Lambda zip
  (`infra.packaging`), importing `function.handler` and answering one signed push in Lambda mode, its
  client built and calling moto's Lambda API: import + first push = total, median of {o.cold_runs}. "With
  bytecode" compiles the bench's own unpacked copy (`compileall`); "without" writes none, as Lambda's
  read-only `/var/task` cannot. Its baseline is the same measurement before the cuts (fixed figures).
- *ours* keeps the database connection across its runs, as a warm Lambda does now
  (`DATABASE_CONNECTIONS=keep`): the first sync of each run connects, the pushes after it do not.
- The blog front end's own calls (`measure_front_end` in `bench/reads.py`) are read from a blog of
  `--front-end-size` articles (5,000 by default) written straight into the database, one to four tags each:
  a page by number with its totals from the middle of the list, page 3 filtered by two tags in OR mode,
  and the tag facets of the whole blog (every article's tags, their largest answer), through the relay.
"""
