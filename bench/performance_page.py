"""docs/performance.md, written from one benchmark run (``python -m bench --performance FILE``): every
figure on the page is the run's, and the memory sizing table is modelled from the run's measurements."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime

from bench.report import MB, machine, targets, targets_text
from bench.runner import Results

# One Lambda vCPU per 1,769 MB of memory (AWS: "at 1,769 MB, a function has the equivalent of one vCPU").
MB_PER_VCPU = 1769
MEMORY_SIZES = (1769, 3008, 5307)
# AWS Lambda duration prices, US East (N. Virginia), first tier, USD per GB-second, as listed on the
# Lambda pricing page on the date below (requests are $0.20 per million on both and left out here).
PRICE_PER_GB_S = {"arm64": 0.0000133334, "x86_64": 0.0000166667}
PRICES_AS_OF = "2026-12-04"


@dataclass(frozen=True)
class SizingRow:
    memory_mb: int
    vcpus: float
    seconds_per_1000: float
    cost_per_1000: dict[str, float]


def sizing(results: Results) -> tuple[list[SizingRow], float, float] | None:
    """The first sync per 1,000 real-shaped articles at each memory size, modelled from the run's
    parallel first sync: the CPU its render processes used (``cpu``, the work more CPUs divide) and the
    rest of its wall time once that work is divided among this machine's processes (``rest``: downloads,
    writes, round trips, this process's own work); at ``c`` vCPUs the model is ``rest + cpu / c``.
    Returns the rows, cpu and rest (seconds per 1,000 articles), or None when no render process ran."""
    real = next((r for r in results.real if r.render_cpu_s > 0 and r.processes > 1), None)
    if real is None:
        return None
    scale = 1000 / real.n
    cpu = real.render_cpu_s * scale
    rest = max(real.parallel.wall_ms / 1000 * scale - cpu / real.processes, 0.0)
    rows = []
    for memory in MEMORY_SIZES:
        vcpus = memory / MB_PER_VCPU
        seconds = rest + cpu / max(vcpus, 1.0)
        gb_s = memory / 1024 * seconds
        rows.append(
            SizingRow(memory, vcpus, seconds, {arch: gb_s * price for arch, price in PRICE_PER_GB_S.items()})
        )
    return rows, cpu, rest


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def page(results: Results, command: str, load: tuple[float, float]) -> str:
    o = results.options
    by_case = {(c.case, c.n): c for c in results.cases}
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Performance notes",
        "",
        "This page is written by the benchmark from one run (`python -m bench --performance "
        "docs/performance.md`); its table and targets are in [benchmark.md](benchmark.md). Every figure "
        "below is that run's; the memory sizing table is modelled from it, as it says.",
        "",
        f"The run: `{command}`, {when}, commit {_commit()}, on {machine()}; GitHub stand-in at "
        f"{o.github_ms:.0f} ms per request, MariaDB behind a relay adding {o.db_ms:.0f} ms per round trip. "
        f"The machine is shared: its load average was {load[0]:.1f} when the run began and {load[1]:.1f} "
        "when it ended, on 2 cores, so times are noisy; round trips and requests are not.",
        "",
        "## A push",
        "",
        " ".join(
            [
                "A push's database work is one ordinary statement after another, on every backend",
                "(`function/worker/sync/opening.py`): the user with the user's lock (`GET_LOCK` in the same",
                "SELECT), this delivery's record with the repository's last sync (the duplicate and replay",
                "checks, one SELECT), then the article index, the remembered parse failures and the start",
                "record, while the branch head and its listing are read from GitHub on another thread under",
                "the lock (the pushed commit's listing asked for together with the head: a commit's tree",
                "never changes), so newest-wins holds; then the books' index, the finish record and the",
                "lock's release. A changed article adds its blob and its write transaction (one round trip).",
            ]
        ),
        "",
        "| push | N | wall ms (median) | DB round trips | GitHub requests |",
        "|---|---|---|---|---|",
    ]
    for case in ("no-change push", "one-article push"):
        for n in o.sizes:
            if (c := by_case.get((case, n))) is not None:
                lines.append(
                    f"| {case} | {n} | {c.ours_ms:.0f} | {c.ours.db_round_trips} | {c.ours.github_requests} |"
                )
    lines += [
        "",
        f"At {o.db_ms:.0f} ms per round trip and {o.github_ms:.0f} ms per GitHub request the floor of a "
        f"no-change push is {8 * o.db_ms:.0f} ms (eight round trips one after another; the head and its "
        "listing are read while three of them travel); the rest is CPU (decoding the index, diffing the "
        "listing) on the shared machine.",
        "",
        "## A first sync",
        "",
        "Rendering is pure Python (markdown-it, Pygments) and is most of a first sync. It runs in worker "
        "processes, one per CPU the function may use (`os.sched_getaffinity`; `RENDER_PROCESSES` overrides "
        "it, `1` renders in the function's own process), made with `os.fork` and pipes only: Lambda has no "
        "`/dev/shm`, so `multiprocessing`'s queues and semaphores cannot be used there. Each file goes to a "
        "render process as soon as it comes out of the tarball, and the rendered articles are written in "
        "transactions while the rest render. Highlighting tries, at each position, only the lexer rules "
        "that can start with the character there, and markdown-it's block rules are skipped at lines that "
        "do not start with their marker. The output is byte for byte what the sequential path writes "
        "(tests/articles/test_parallel_parse.py, and the comparison below).",
        "",
    ]
    if results.real:
        lines += [
            "| real-shaped first sync | N | Markdown | parallel s | sequential s | ratio | earlier "
            "commit s | ratio | output | peak PSS |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in results.real:
            seq = r.sequential
            old = r.earlier.measured if r.earlier is not None else None
            lines.append(
                f"| {r.processes} processes | {r.n} | {r.corpus_mb:.0f} MB | "
                f"{r.parallel.wall_ms / 1000:.1f} | "
                + (f"{seq.wall_ms / 1000:.1f} | {r.parallel.wall_ms / seq.wall_ms:.2f} | " if seq else "| | ")
                + (f"{old.wall_ms / 1000:.1f} | {r.parallel.wall_ms / old.wall_ms:.2f} | " if old else "| | ")
                + ("identical | " if r.identical else ("different | " if r.identical is False else "| "))
                + (f"{r.peak_pss_bytes / MB:.0f} MB |" if r.peak_pss_bytes is not None else "|")
            )
        commit = next((r.earlier.commit[:7] for r in results.real if r.earlier is not None), "")
        lines += [
            "",
            "*Sequential* is this commit's worker with `RENDER_PROCESSES=1` and no read-ahead. *Earlier "
            f"commit* is the sequential path as it was before the render processes, the read-ahead and the "
            f"render cuts (commit {commit}, unpacked from git and run in a child interpreter against the "
            "same stand-in and database in the same run, `bench/earlier.py`): the bar the one-third target "
            "is measured against, since the cuts make both of this commit's paths faster. Where both ran, "
            f"the earlier commit's and the parallel path took turns {o.repeats} times and each figure is "
            "the median: this shared machine's speed drifts by a fifth from one minute to the next. "
            "On 2 cores the render processes alone can at best halve the time. *Output* compares this "
            "commit's two paths byte for byte. *Peak PSS* is what the sync adds to the proportional set "
            "size of the function's process and its render processes together (shared pages split "
            "between them), "
            "sampled every 100 ms.",
            "",
        ]
    model = sizing(results)
    if model is None and results.real:
        lines += [
            "## Memory size: first-sync time and cost per 1,000 articles (modelled)",
            "",
            "Not modelled from this run: no render process ran (one CPU, or `RENDER_PROCESSES=1`).",
            "",
        ]
    if model is not None:
        rows, cpu, rest = model
        lines += [
            "## Memory size: first-sync time and cost per 1,000 articles (modelled)",
            "",
            "Only 2 cores can be measured here. From the parallel real-shaped run above, per 1,000 "
            f"articles: {cpu:.1f} s of CPU in the render processes (the work more CPUs divide) and "
            f"{rest:.1f} s of its wall time besides its share of that work (downloads, writes, round trips, "
            "the function's own process). Lambda gives one vCPU per 1,769 MB; at `c` vCPUs the model is "
            "`rest + cpu / c` (one Lambda vCPU taken as one core of this machine; below one vCPU the "
            "render processes share what there is). Costs are "
            f"duration only, at {PRICE_PER_GB_S['arm64']:.10f} USD per GB-s (arm64) and "
            f"{PRICE_PER_GB_S['x86_64']:.10f} (x86_64), US East, first tier, Lambda's price list on "
            f"{PRICES_AS_OF}.",
            "",
            "| memory | vCPUs | first sync per 1,000 articles (modelled) | cost arm64 | cost x86_64 |",
            "|---|---|---|---|---|",
        ]
        for row in rows:
            lines.append(
                f"| {row.memory_mb} MB | {row.vcpus:.1f} | {row.seconds_per_1000:.1f} s | "
                f"${row.cost_per_1000['arm64']:.4f} | ${row.cost_per_1000['x86_64']:.4f} |"
            )
        lines += [""]
    lines += [
        "## The targets of this run",
        "",
        targets_text(targets(results)),
        "",
        "A target not met is not met: the figure says by how much, on this shared machine.",
        "",
    ]
    return "\n".join(lines)


def load_average() -> float:
    return os.getloadavg()[0]
