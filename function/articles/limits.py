"""Bounds that keep the reading of one file within about a second of CPU and well under 100 MB.

The budget covers all of a file's reading (``function.articles.one_file``): its YAML, the checks of its
fields, the render, the heading ids and the footnote key. A budget opened inside another (the render's,
inside the file's) never ends later than the outer one.

markdown-it-py is pure Python and some inputs cost it quadratic time (thousands of unclosed ``[``, runs
of ``*_``, unclosed ``<!--``...); on this project's machines even 300,000 empty paragraphs take ~20 s. No
size limit short of rejecting real articles bounds that, so the render runs on a CPU budget instead:

* ``MAX_RENDER_CPU_SECONDS`` of the rendering thread's CPU time (not wall time, so a busy machine does
  not fail articles), checked before every markdown-it rule runs and inside our render rules (code,
  math, embeds). Past it the article fails with a clear message and the stored version is kept. Memory
  follows from it: what markdown-it can allocate in a second is tens of MB.
* ``maxNesting`` (markdown-it's own, 20 levels of quotes/lists/blocks) bounds recursion.
* A line-leading run of more than ``MAX_CONTAINER_COLONS`` colons gets a backslash (``defuse``): the
  same text, but not a ``:::`` fence (the container rule is quadratic in fence length).
* Highlighting and formulas have their own size limits (``highlight``, ``mathml``) and fall back to
  plain text, so a long code block degrades instead of failing.

Figures are in docs/articles.md.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from markdown_it import MarkdownIt

from function.errors import RenderLimitError

MAX_RENDER_CPU_SECONDS = 1.0
MAX_NESTING = 20

# Reading the thread's CPU clock is a system call (~4 us here): the guard reads it every 128th rule call.
_CHECK_EVERY = 128


RENDER_OVER_BUDGET = (
    "the Markdown body takes more than {seconds:g} s of CPU to render"
    " (deeply nested or heavily repeated markup?)"
)


class _Budget:
    __slots__ = ("calls", "deadline", "message")

    def __init__(self, deadline: float, message: str) -> None:
        self.deadline = deadline
        self.message = message
        self.calls = 0


# mdit-py-plugins' container rule compares every marker character of every later line in Python, so
# thousands of lines of hundreds of colons cost minutes. Zenn nests with 3-5 colons.
MAX_CONTAINER_COLONS = 32
_LONG_COLON_RUN = re.compile(rf"^([ \t>]*)(:{{{MAX_CONTAINER_COLONS + 1},}})", re.MULTILINE)

_budget: ContextVar[_Budget | None] = ContextVar("render_budget", default=None)


@contextmanager
def cpu_budget(seconds: float = MAX_RENDER_CPU_SECONDS, message: str = RENDER_OVER_BUDGET) -> Iterator[None]:
    """Within this block ``check_budget`` raises ``RenderLimitError(message)`` once the thread has used
    ``seconds`` of CPU, or once the budget this block is in ran out, whichever comes first (``message``
    may name ``{seconds}``)."""
    outer = _budget.get()
    deadline = time.thread_time() + seconds
    if outer is not None:
        deadline = min(deadline, outer.deadline)
    # The innermost step's words: they say where the time went ("to render", "to read the YAML").
    reset = _budget.set(_Budget(deadline, message.format(seconds=seconds)))
    try:
        yield
    finally:
        _budget.reset(reset)


def check_budget() -> None:
    budget = _budget.get()
    if budget is not None and time.thread_time() > budget.deadline:
        raise RenderLimitError(budget.message)


def checking_every(n: int) -> Callable[[], None]:
    """A ``check_budget`` for loops: it reads the clock (a system call) once in ``n`` calls."""
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1
        if calls % n == 0:
            check_budget()

    return check


def defuse(text: str) -> str:
    """``text`` with a backslash before any line-leading run of more than 32 colons: it reads the same
    (``\\:`` is a colon) but can no longer open or close a ``:::`` block."""
    return _LONG_COLON_RUN.sub(r"\1\\\2", text) if ":" * (MAX_CONTAINER_COLONS + 1) in text else text


def guard_rules(md: MarkdownIt) -> None:
    """Make ``md`` check the budget as it works.

    markdown-it tries a chain's rules in order at every line (block) or position (inline), so the first
    rule of each chain runs at every step of every loop, including the look-ahead scans that make some
    inputs quadratic: guarding that one (and every core rule) is enough, and keeps the cost near zero.
    """
    md.options["maxNesting"] = MAX_NESTING
    rulers: list[Any] = [md.block.ruler, md.inline.ruler, md.inline.ruler2]
    for ruler in rulers:
        for chain in _chains(ruler):
            first = next(r for r in ruler.__rules__ if r.enabled and (not chain or chain in r.alt))
            if not getattr(first.fn, "guarded", False):
                first.fn = _guarded(first.fn)
        ruler.__cache__ = None  # recompiled from the wrapped functions on next use
    for rule in md.core.ruler.__rules__:
        rule.fn = _guarded(rule.fn)
    md.core.ruler.__cache__ = None


def _chains(ruler: Any) -> set[str]:
    return {""} | {alt for rule in ruler.__rules__ if rule.enabled for alt in rule.alt}


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any) -> Any:
        budget = _budget.get()
        if budget is not None:
            budget.calls += 1
            if budget.calls % _CHECK_EVERY == 0:
                check_budget()
        return fn(*args)

    guarded.guarded = True  # type: ignore[attr-defined]
    return guarded
