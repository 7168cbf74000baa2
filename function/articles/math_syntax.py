"""Inline ``$…$`` and ``$$…$$`` found exactly where Zenn finds them (its fork of markdown-it-katex).

mdit-py-plugins' dollarmath reads inline math by its own rules (an escaped ``\\$`` never closes, a formula
may span lines, a ``$`` inside a link's text opens one). Zenn's renderer reads it with two regular
expressions, tried before backslash escapes: no ``$`` right after a backslash or a digit, none right before
a digit after the closing one, no line break inside, and a formula that would run into a link's
``](http…`` is not one. These rules use the same expressions (JavaScript's ``.`` and ``\\S`` spelled out),
and produce dollarmath's token types, so rendering is the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

# JavaScript's "." (anything but a line terminator) and "\S" (anything but its whitespace).
_DOT = r"[^\n\r\u2028\u2029]"
_NON_SPACE = r"[^\s\ufeff]"
# Zenn: /\${2}((?:\S)|(?:\S(?!.*\]\(http).*?\S))\${2}/y and /\$((?:\S)|(?:\S(?![^$]*\]\(http.*).*?\S))\$/y
_DOUBLE = re.compile(rf"\$\$((?:{_NON_SPACE})|(?:{_NON_SPACE}(?!{_DOT}*\]\(http){_DOT}*?{_NON_SPACE}))\$\$")
_SINGLE = re.compile(rf"\$((?:{_NON_SPACE})|(?:{_NON_SPACE}(?![^$]*\]\(http{_DOT}*){_DOT}*?{_NON_SPACE}))\$")


def zenn_inline_math_plugin(md: MarkdownIt) -> None:
    """Replace dollarmath's inline rule (call after ``dollarmath_plugin``)."""
    md.inline.ruler.disable("math_inline")
    md.inline.ruler.before("escape", "zenn_math_inline_double", _rule(_DOUBLE, "$$", "math_inline_double"))
    md.inline.ruler.before("escape", "zenn_math_inline", _rule(_SINGLE, "$", "math_inline"))


def _rule(pattern: re.Pattern[str], marker: str, token_type: str) -> Callable[[StateInline, bool], bool]:
    def rule(state: StateInline, silent: bool) -> bool:
        src, pos = state.src, state.pos
        if not src.startswith(marker, pos) or not _free_before(src, pos):
            return False
        match = pattern.match(src, pos)
        if not match or match.end() > state.posMax or not _free_after(src, match.end()):
            return False
        if not silent:
            token = state.push(token_type, "math", 0)
            token.content = match[1]
            token.markup = marker
        state.pos = match.end()
        return True

    return rule


def _free_before(src: str, pos: int) -> bool:
    # No backslash or decimal digit right before the opening "$".
    return pos == 0 or not (src[pos - 1] == "\\" or "0" <= src[pos - 1] <= "9")


def _free_after(src: str, end: int) -> bool:
    # No decimal digit right after the closing "$".
    return end >= len(src) or not ("0" <= src[end] <= "9")
