"""The benchmark keeps working: a tiny run (N=5, no added latency, 5 accept calls) prints every case.

Figures are not asserted (this is not a timed test), only the shape of the table and one fact that does not
depend on the machine: a push that changes nothing costs ours fewer GitHub requests than the baseline.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import earlier
from tests.kit.mariadb import ENV_TEST_DATABASE_URL

ROOT = Path(__file__).resolve().parents[2]
TINY = (
    "--sizes",
    "5",
    "--github-ms",
    "0",
    "--db-ms",
    "0",
    "--accept-calls",
    "5",
    "--repeats",
    "1",
    "--read-calls",
    "3",
    "--cold-runs",
    "0",
    "--real-sizes",
    "10",
    "--front-end-size",
    "30",
    "--bytes-size",
    "10",
    "--search-sizes",
    "12,30",
)
CASES = (
    "first sync",
    "no-change push",
    "one-article push",
    "accept path (p50 / p99)",
    "read: list page (p50 / p99)",
    "read: one article (p50 / p99)",
    "read: 304 revalidation (p50 / p99)",
    "read: largest answer",
    "read: page by number with totals (p50 / p99)",
    "read: page 3, two tags in OR mode (p50 / p99)",
    "read: tag facets, whole blog (p50 / p99)",
    "search: lexical query, real-shaped ja/en (p50 / p99)",
    "search: first sync with its index / the index alone",
    "search: no-change push (statements on the index)",
    "import function.handler",
    "bytes: no-change push",
    "bytes: list page",
    "bytes: one article",
)


def run_bench(server_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, ENV_TEST_DATABASE_URL: server_url}
    return subprocess.run(
        [sys.executable, "-m", "bench", *TINY, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def table_rows(output: str) -> dict[str, list[str]]:
    """The table's rows by their first cell."""
    rows: dict[str, list[str]] = {}
    for line in output.splitlines():
        if line.startswith("| ") and not line.startswith("| case"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


@pytest.mark.mysql
def test_tiny_run_prints_every_case_and_writes_the_fragment(mysql_server: str, tmp_path: Path) -> None:
    # WHEN the benchmark runs at N=5 with no added latency
    fragment = tmp_path / "benchmark.md"
    result = run_bench(mysql_server, "--write", str(fragment))

    # THEN it prints one row per case, and the README fragment holds the same table
    assert result.returncode == 0, result.stderr[-3000:]
    rows = table_rows(result.stdout)
    assert set(CASES) <= set(rows), result.stdout
    assert "| no-change push" in fragment.read_text()
    # AND a push that changes nothing costs ours fewer GitHub requests than the baseline
    ours, baseline = (int(x) for x in rows["no-change push"][4].split(" / "))
    assert ours < baseline
    # AND the real-shaped first sync ran both ways, with the same articles stored
    assert any(row.startswith("first sync, real-shaped") for row in rows), result.stdout
    assert "- [x] first sync of real-shaped N=10: output identical to the sequential path's" in result.stdout
    # AND the earlier commit's sequential path synced the same corpus in the same run (when the clone has it)
    earlier_row = next(
        row for name, row in rows.items() if name.endswith(", sequential") and "commit" in name
    )
    if earlier.available():
        assert earlier_row[2].replace(".", "").isdigit(), earlier_row
    else:
        assert earlier_row[2].startswith("not run"), earlier_row
    # AND a push that changes nothing takes at most eight database round trips
    assert int(rows["no-change push"][5].split(" / ")[0]) <= 8
    # AND a list page takes at most two query round trips besides the connection's three
    assert int(rows["read: list page (p50 / p99)"][5].split()[0]) <= 2 + 3
    # AND so does a page by number with its totals; the tag facets take one
    assert int(rows["read: page by number with totals (p50 / p99)"][5].split()[0]) <= 2 + 3
    assert int(rows["read: page 3, two tags in OR mode (p50 / p99)"][5].split()[0]) <= 2 + 3
    assert int(rows["read: tag facets, whole blog (p50 / p99)"][5].split()[0]) <= 1 + 3
    # AND of the article bodies, a no-change push and a list page read none, an article's page one
    assert [
        rows[case][6] for case in ("bytes: no-change push", "bytes: list page", "bytes: one article")
    ] == [
        "0",
        "0",
        "1",
    ]
    # AND a lexical search takes at most two, and a push that changes nothing sends nothing for its index
    assert int(rows["search: lexical query, real-shaped ja/en (p50 / p99)"][5].split()[0]) <= 2 + 3
    assert rows["search: no-change push (statements on the index)"][5].endswith("(0)")
    assert "- [x] no-change push: nothing sent for the search index (N=12)" in result.stdout
