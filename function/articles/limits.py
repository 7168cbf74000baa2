"""Bounds that keep the render of one file within about a second of CPU and well under 100 MB.

markdown-it-py is pure Python and some inputs cost it quadratic time (thousands of unclosed ``[``, runs
of ``*_``, unclosed ``<!--``...); on this project's machines even 300,000 empty paragraphs take ~20 s. No
size limit short of rejecting real articles bounds that, so the render runs on a CPU budget instead:

* ``MAX_RENDER_CPU_SECONDS`` of the rendering thread's CPU time (not wall time, so a busy machine does
  not fail articles), checked before every markdown-it rule runs and inside our render rules (code,
  math, embeds). Past it the article fails with a clear message and the stored version is kept. Memory
  follows from it: what markdown-it can allocate in a second is tens of MB.
* ``maxNesting`` (markdown-it's own, 20 levels of quotes/lists/blocks) bounds recursion.
* Highlighting and formulas have their own size limits (``highlight``, ``mathml``) and fall back to
  plain text, so a long code block degrades instead of failing.

Figures are in docs/articles.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from markdown_it import MarkdownIt

MAX_RENDER_CPU_SECONDS = 1.0
MAX_NESTING = 20

_deadline: ContextVar[float | None] = ContextVar("render_deadline", default=None)


class RenderLimitError(ValueError):
    """The Markdown is past a render bound; the message says which."""


@contextmanager
def cpu_budget(seconds: float = MAX_RENDER_CPU_SECONDS) -> Iterator[None]:
    """Within this block ``check_budget`` raises once the thread has used ``seconds`` of CPU."""
    reset = _deadline.set(time.thread_time() + seconds)
    try:
        yield
    finally:
        _deadline.reset(reset)


def check_budget() -> None:
    deadline = _deadline.get()
    if deadline is not None and time.thread_time() > deadline:
        raise RenderLimitError(
            f"the Markdown body takes more than {MAX_RENDER_CPU_SECONDS:g} s of CPU to render "
            "(deeply nested or heavily repeated markup?)"
        )


def guard_rules(md: MarkdownIt) -> None:
    """Make every block, inline and core rule of ``md`` check the budget before it runs."""
    md.options["maxNesting"] = MAX_NESTING
    rulers: list[Any] = [md.core.ruler, md.block.ruler, md.inline.ruler, md.inline.ruler2]
    for ruler in rulers:
        for rule in ruler.__rules__:
            rule.fn = _guarded(rule.fn)
        ruler.__cache__ = None  # recompiled from the wrapped functions on next use


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any) -> Any:
        deadline = _deadline.get()
        if deadline is not None and time.thread_time() > deadline:
            check_budget()
        return fn(*args)

    return guarded
