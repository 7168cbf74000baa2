"""The render of any file within the size limit is bounded: about a second of CPU, well under 100 MB.

Inputs that cost markdown-it-py quadratic time (before the budget: 49 s to 200 s and up to 470 MB for
1 MiB) either render or fail cleanly once the CPU budget is spent. The bounds asserted here are generous
(3x the budget; tracemalloc's peak under 100 MB); ``pytest -s`` prints the figures.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from function.articles.limits import MAX_RENDER_CPU_SECONDS
from function.articles.parse import MAX_FILE_BYTES, parse_article
from function.errors import ArticleParseError

from .helpers import SHA

N = MAX_FILE_BYTES - 100
HOSTILE = {
    "unclosed [": "[" * N,
    "unclosed ![": "![" * (N // 2),
    "unclosed [a](": "[a](" * (N // 4),
    "*_ runs": "*_" * (N // 2),
    "<![CDATA[ runs": "<![CDATA[" * (N // 9),
    "unclosed <!--": "<!--\n" * (N // 5),
    "nested quotes": ">" * N,
    "nested lists": "".join("  " * i + "- x\n" for i in range(1000)),
    "nested containers": "".join(":" * (3 + i) + "details x\n" for i in range(1000, 0, -1)),
    "empty paragraphs": "a\n\n" * (N // 3),
    "headings": "## h\n" * (N // 5),
    "one huge table": "|a|b|\n|-|-|\n" + "|x|y|\n" * (N // 6),
    "inline math": "$a$ " * (N // 4),
    "one huge code block": "```python\n" + "x = [1, 2, 3]  # c\n" * (N // 19) + "```\n",
}


def _parse(name: str, allow_raw_html: bool) -> str:
    data = f"---\ntitle: t\n---\n{HOSTILE[name]}".encode()[:MAX_FILE_BYTES]
    try:
        parse_article("articles/x.md", SHA, data, allow_raw_html=allow_raw_html)
    except ArticleParseError as exc:
        assert "CPU" in str(exc) or "rendered HTML is" in str(exc), exc
        return f"refused: {exc}"
    return "rendered"


@pytest.mark.parametrize("allow_raw_html", [False, True], ids=["raw-off", "raw-on"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_renders_or_fails_within_the_cpu_bound(name: str, allow_raw_html: bool) -> None:
    cpu = time.thread_time()
    outcome = _parse(name, allow_raw_html)
    used = time.thread_time() - cpu
    print(f"\n{name:22} raw={allow_raw_html!s:5} cpu={used:5.2f}s {outcome[:60]}")
    # The budget is checked between rule calls; the generous margin covers the linear work around it.
    assert used < 3 * MAX_RENDER_CPU_SECONDS, outcome


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_stays_under_100_mb(name: str) -> None:
    # tracemalloc slows Python several times (and so spends the CPU budget on less work): memory only.
    tracemalloc.start()
    try:
        outcome = _parse(name, allow_raw_html=False)
        peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()
    print(f"\n{name:22} peak={peak_mb:6.1f}MB {outcome[:60]}")
    assert peak_mb < 100, outcome
