"""``$…$`` / ``$$…$$`` → MathML, which browsers render without any script (latex2mathml)."""

from __future__ import annotations

from typing import Any

from latex2mathml.converter import convert
from markdown_it.common.utils import escapeHtml

from function.articles.limits import check_budget

# latex2mathml recurses per group; a formula longer than this is shown as its source instead.
MAX_FORMULA_CHARS = 5000


def render_math(latex: str, options: dict[str, Any]) -> str:
    """MathML for ``latex``; a formula latex2mathml cannot read is shown as escaped ``<code>``."""
    check_budget()
    display = "block" if options.get("display_mode") else "inline"
    if len(latex) <= MAX_FORMULA_CHARS:
        try:
            return convert(latex, display=display)
        # latex2mathml raises its own errors, but also IndexError/KeyError/RecursionError on odd input.
        except Exception:  # noqa: BLE001
            return _source(latex)
    return _source(latex)


def _source(latex: str) -> str:
    return f'<code class="math-source">{escapeHtml(latex)}</code>'
