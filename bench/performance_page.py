"""docs/performance.md, written from one benchmark run (``python -m bench --performance FILE``): every
figure on the page is the run's, and the memory sizing table is modelled from the run's measurements."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime

from bench.read_bytes import ByteCase
from bench.report import MB, bytes_table, machine, targets, targets_text
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
        "below is that run's, but for *The renderer as its libraries are*, which says when it was "
        "measured; the memory sizing table is modelled from the run, as it says.",
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
                "lock's release. A changed article adds its blob and its write transaction: one round trip",
                "for the transaction's statements, and one for each read inside it (the search index's",
                "numbers of the articles, and the rows an edit rewrites, are read first: one or two more).",
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
        "Rendering is pure Python (markdown-it-py and Pygments, used through their public API as they "
        "are) and is most of a first sync. It runs in render processes, one per CPU the function may use "
        "(`os.sched_getaffinity`; `RENDER_PROCESSES` overrides it, `1` renders in the function's own "
        "process), started by `multiprocessing` with the spawn method and fed over one `Pipe` each: Lambda "
        "has no `/dev/shm`, so `Pool`, `Queue` and `Manager` (which need semaphores) cannot be used there, "
        "and a spawned interpreter copies nothing of the function's threads. Each file goes to a render "
        "process as soon as it comes out of the tarball, and the rendered articles are written in "
        "transactions while the rest render. The output is byte for byte what the sequential path writes "
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
    lines += RENDERER_AS_IS
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
    if results.bytes_read:
        lines += bytes_section(results.bytes_read)
    lines += [
        "## The targets of this run",
        "",
        targets_text(targets(results)),
        "",
        "A target not met is not met: the figure says by how much, on this shared machine.",
        "",
    ]
    return "\n".join(lines)


# What removing the renderer's own speed-ups cost, and where they could live upstream: measured once, when
# they were removed, not by each run (the code they were is gone).
RENDERER_AS_IS = [
    "## The renderer as its libraries are",
    "",
    "Until commit eaf72ea the renderer had speed-ups of its own built on private internals: highlighting "
    "tried, at each position, only the lexer rules whose regex could start with the character there (a "
    "copy of Pygments' `RegexLexer` loop, the rules read with CPython's private `re._parser`); "
    "markdown-it-py's block rules were skipped at lines they cannot start (its `Ruler.__rules__` "
    "rewritten); and the render processes were forked by hand, with a channel back for image URLs. They "
    "are gone. The output did not change: a render oracle of 29,422 renders (the test fixtures, Zenn's "
    "examples, 450 bench articles at six settings, 4,000 generated documents, every Pygments lexer on "
    "four samples) hashed every output field before and after, with no difference.",
    "",
    "What it costs, measured on 2026-12-05 on this machine while other test suites ran on it (medians; "
    "the two versions took turns):",
    "",
    "| | with the speed-ups | without |",
    "|---|---|---|",
    "| render CPU per real-shaped article (100 articles, 41 KB mean; two rounds) | 31.0, 34.5 ms "
    "| 47.2, 45.9 ms |",
    "| of which highlighting its code blocks | 10.0, 10.9 ms | 24.5, 23.0 ms |",
    "| first sync of real-shaped N=500, 2 render processes, load average 5.6-7.0 | 20.9 s | 38.1 s |",
    "| its render CPU (both processes) | 16.5 s | 26.2 s |",
    "",
    "The narrowed lexer rules were worth 11-13 ms of CPU per article (the renderer with only them "
    "removed: 44.0, 45.3 ms), the skipped block rules 0-3 ms (34.7, 33.4 ms: within the noise). Render "
    "processes still pay: in the same session, at load 2.5-5.7, the first sync of real-shaped N=500 took "
    "27.6 s with 2 render processes and 47.6 s rendering in the function's own process (median of 3 "
    "each, taking turns); the machine's scheduler shares its cores between sessions, so under heavier "
    "load the processes gain less.",
    "",
    "Proposed upstream (not filed from here):",
    "",
    "- **Pygments**, `RegexLexer.get_tokens_unprocessed` (`pygments/lexer.py`): index each state's rules "
    "by the characters their regex can start with, computed once per lexer class and erring towards "
    '"any", and try only those at a position, in order (adjacent ones as one alternation). Here: 23-25 '
    "ms of highlighting per real-shaped article became 10-11. It needs to know what a regex can start "
    "with; `re` works that out when it compiles a pattern (the prefix and charset of "
    "`Lib/re/_compiler.py`'s `_compile_info`) but does not expose it, so the first step is a public "
    "attribute of `re.Pattern` in CPython, or Pygments reading its own rule sources.",
    "- **markdown-it-py**, `ParserBlock.tokenize` (`markdown_it/parser_block.py`) and `Ruler`: an optional "
    "rule option, beside `alt`, naming the characters a line the rule matches may start with, so the "
    "parser skips the rule at other lines (most block rules need a marker: a backtick, `#`, `>`...). "
    "Worth at most a few percent of the render here.",
    "",
]


BYTES_READ_NOTES = (
    "TiDB stores a row as one key-value pair: a statement that reads any column of a row reads all of "
    "it, and TiDB Cloud charges a Request Unit per 64 KiB its storage reads. A real-shaped article is "
    "about 160 KB with its HTML, so the Markdown, the HTML and the table of contents live in "
    "`article_bodies`, one row per article, apart from the `articles` row that the push's index, the "
    "list pages, the tag facets and the sitemap read (about 400 bytes). Only an article's page, the "
    "feed's content and the preview read a body. MariaDB keeps large text off-page and would not show "
    "the difference, so the bench estimates what TiDB reads (`bench/read_bytes.py`): every SELECT of "
    "the case is run again under MariaDB's `ANALYZE FORMAT=JSON`, which reports for each table the "
    "rows it actually read and whether only an index was read; each row is charged its table's average "
    "whole-row size on the same data (text by its UTF-8 length, numbers and times at the width TiDB's "
    "row format gives them, plus 16 bytes of key), or the size of its index's key columns when only the "
    "index was read. RU is those bytes / 64 KiB (the read charge only: TiDB Cloud also charges per "
    "request and for CPU). *Result bytes* are what the server sent back, counted by the latency relay. "
    "Writes are not counted: a no-change push writes only its delivery record."
)


def bytes_section(cases: list[ByteCase]) -> list[str]:
    """The bytes-read cases: the table and how they are estimated."""
    n = cases[0].n
    return [
        f"## Bytes read from the database (TiDB estimate), real-shaped N={n}",
        "",
        BYTES_READ_NOTES,
        "",
        bytes_table(cases),
        "",
    ]


def load_average() -> float:
    return os.getloadavg()[0]
