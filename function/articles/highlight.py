"""Code fences → highlighted HTML with Pygments' CSS classes (no inline styles), Zenn's fence info.

Fence info is read as Zenn does: ```` ```lang:file/name ```` (the file name is shown as a label),
```` ```diff lang ```` (each line marked added/removed/kept, the rest highlighted as ``lang``). An unknown
language or a budget exhausted gives plain escaped code. Classes are Pygments' short ones (``k``, ``s``,
``c``...) under ``pre.highlight``; ``stylesheet()`` is their CSS (served at ``/static/highlight.css``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markdown_it.common.utils import escapeHtml
from pygments.formatters.html import HtmlFormatter, _get_ttype_class
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound

from function.articles.code_bodies import CodeBodies
from function.articles.lexing import tokens
from function.articles.mermaid import diagram_source

# Highlighting is pure Python; past this many characters of code in one article the rest is plain
# (escaped) code, so a file of nothing but code stays within the render bound.
MAX_HIGHLIGHT_CHARS_PER_ARTICLE = 200_000
STYLE = "default"

_LANG_RE = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")
# Zenn's aliases for names Pygments does not know.
_ALIASES = {"react": "jsx", "cwl": "yaml", "vue": "html", "svelte": "html", "shell": "bash", "zsh": "bash"}


@dataclass(frozen=True)
class FenceInfo:
    lang: str  # "" when none or not a safe name
    file_name: str | None
    diff: bool


def parse_info(info: str) -> FenceInfo:
    """``"tsx:app/layout.tsx"`` → tsx + file name; ``"diff js"`` / ``"js diff"`` → js with diff lines."""
    info = info.strip()
    lang_part, _, file_part = info.partition(":")
    words = lang_part.split()
    diff = "diff" in words
    others = [w for w in words if w != "diff"]
    if diff and not others:
        others, diff = ["diff"], False  # a plain ```diff fence: Pygments' diff lexer does the colouring
    lang = others[0].lower() if others else ""
    if not _LANG_RE.fullmatch(lang):
        lang = ""
    return FenceInfo(lang=lang, file_name=file_part.strip() or None, diff=diff)


class Budget:
    """How many more characters of code this render may highlight."""

    def __init__(self, chars: int = MAX_HIGHLIGHT_CHARS_PER_ARTICLE) -> None:
        self.chars = chars

    def take(self, n: int) -> bool:
        if n > self.chars:
            self.chars = 0
            return False
        self.chars -= n
        return True


def render_fence(code: str, info: str, budget: Budget, bodies: CodeBodies | None = None) -> str:
    """A ``mermaid`` fence as ``<pre class="mermaid">``; any other as
    ``<div class="code-block-container">[file label]<pre class="highlight"><code…>``; with ``bodies``,
    the code inside ``<code>`` is a marker for ``bodies.put_in`` (it skips the sanitizer)."""
    fence = parse_info(info)
    if fence.lang == "mermaid" and not fence.diff:
        # A diagram: the source for mermaid.js in the reader's browser (its default selector is
        # "pre.mermaid"); nothing is drawn or run here. Zenn also trims the source. Directives and
        # front matter, which would reconfigure mermaid.js, are removed (mermaid.diagram_source).
        return f'<pre class="mermaid">{escapeHtml(diagram_source(code))}</pre>\n'
    lexer = _lexer(fence.lang) if fence.lang and fence.lang != "mermaid" else None
    if fence.diff:
        body = _diff_body(code, lexer, budget)
    elif lexer is not None and budget.take(len(code)):
        body = _highlight(code, lexer)
    else:
        body = escapeHtml(code)
    if bodies is not None:
        body = bodies.keep_out(body)
    classes = ["language-diff"] if fence.diff else []
    if fence.lang:
        classes.append(f"language-{fence.lang}")
    code_class = f' class="{" ".join(classes)}"' if classes else ""
    label = (
        '<div class="code-block-filename-container"><span class="code-block-filename">'
        f"{escapeHtml(fence.file_name)}</span></div>"
        if fence.file_name
        else ""
    )
    pre = f'<pre class="highlight"><code{code_class}>{body}</code></pre>'
    return f'<div class="code-block-container">{label}{pre}</div>\n'


def stylesheet() -> str:
    """CSS for the classes ``render_fence`` emits, plus the diff line marks."""
    return (
        str(_formatter().get_style_defs("pre.highlight"))
        + "\npre.highlight .diff-add { background-color: #e6ffec; }"
        + "\npre.highlight .diff-remove { background-color: #ffebe9; }\n"
    )


def _diff_body(code: str, lexer: Lexer | None, budget: Budget) -> str:
    lines = code.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    markers = [line[:1] if line[:1] in ("+", "-", " ") else "" for line in lines]
    rest = [line[len(marker) :] for line, marker in zip(lines, markers, strict=True)]
    joined = "\n".join(rest) + "\n"
    if lexer is not None and budget.take(len(joined)):
        highlighted = _highlight(joined, lexer).split("\n")
    else:
        highlighted = escapeHtml(joined).split("\n")
    out = []
    for marker, html in zip(markers, highlighted, strict=False):
        kind = {"+": "diff-add", "-": "diff-remove"}.get(marker, "diff-keep")
        out.append(f'<span class="diff-line {kind}">{escapeHtml(marker)}{html}</span>')
    return "\n".join(out) + "\n"


def _highlight(code: str, lexer: Lexer) -> str:
    """Pygments' tokens as ``<span class="…">``, the classes of its HtmlFormatter.

    Written here rather than with ``pygments.highlight``: the formatter's machinery doubled the cost of the
    small blocks articles are made of. A span never crosses a line break, so splitting the output on
    ``"\n"`` (diff fences) keeps every line well formed; whitespace gets no span. Tokens come from
    ``lexing.tokens`` (Pygments' own, found faster); the markup of short ones is remembered, since code is
    mostly the same keywords, names and punctuation again and again.
    """
    out = []
    known = _FRAGMENTS
    for _, ttype, value in tokens(lexer, code):
        if len(value) > _MAX_REMEMBERED_CHARS:
            out.append(_fragment(ttype, value))
            continue
        key = (ttype, value)
        html = known.get(key)
        if html is None:
            html = _fragment(ttype, value)
            if len(known) >= _MAX_FRAGMENTS:
                known.clear()
            known[key] = html
        out.append(html)
    return "".join(out)


def _fragment(ttype: _TokenType, value: str) -> str:
    css = _CLASSES.get(ttype)
    if css is None:
        css = _CLASSES[ttype] = _get_ttype_class(ttype)
    text = escapeHtml(value)
    if not css or css == "w":
        return text
    if "\n" in text:
        return "\n".join(f'<span class="{css}">{part}</span>' if part else "" for part in text.split("\n"))
    return f'<span class="{css}">{text}</span>'


_CLASSES: dict[object, str] = {}
# The markup of tokens up to this long, per token type and text: a few MB at most, then it starts over.
_MAX_REMEMBERED_CHARS = 40
_MAX_FRAGMENTS = 20_000
_FRAGMENTS: dict[tuple[_TokenType, str], str] = {}


@functools.cache
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(nowrap=True, style=STYLE)


@functools.lru_cache(maxsize=256)
def _lexer(lang: str) -> Lexer | None:
    try:
        return get_lexer_by_name(_ALIASES.get(lang, lang), stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None
