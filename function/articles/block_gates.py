"""Block rules skipped at lines they cannot start: a line's first character is checked before the call.

markdown-it tries its block rules in order at the start of every block, and a paragraph asks most of
them again at each of its lines (can this line end the paragraph?). Most rules only match a line that
starts with one of a few characters (a fence with a backtick or tilde, a heading with ``#``...), and
each one finds that out itself after a Python call, a debug log call and an indentation check: on
real-shaped articles, a fifth of the parse. The gate reads the line's first character (where every one
of these rules reads it: ``bMarks + tShift``) and answers False at once when it is not one the rule
starts with, which is what the rule itself would answer. Rules that can start with anything (a table,
indented code, a setext heading, a paragraph) are not gated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock

BlockRule = Callable[[StateBlock, int, int, bool], bool]

# Rule name -> the characters a line it matches can start with (after its indentation), from each rule's
# own first test (markdown-it, mdit-py-plugins, function.articles.zenn_syntax).
BLOCK_RULE_FIRST_CHARS: dict[str, str] = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "reference": "[",
    "footnote_def": "[",
    "html_block": "<",
    "heading": "#",
    "math_block": "$",
    "container_message": ":",
    "container_details": ":",
    "zenn_embed": "@",
    "zenn_comment": "<",
}


def gate_block_rules(md: MarkdownIt) -> None:
    """Gate ``md``'s block rules named in ``BLOCK_RULE_FIRST_CHARS`` (before the budget guard wraps the
    first rule of each chain, so the guard still runs at every step)."""
    for rule in md.block.ruler.__rules__:
        chars = BLOCK_RULE_FIRST_CHARS.get(rule.name)
        if chars is not None:
            rule.fn = _gated(rule.fn, frozenset(chars))
    md.block.ruler.__cache__ = None  # recompiled from the gated functions on next use


def _gated(rule: BlockRule, chars: frozenset[str]) -> BlockRule:
    def gated(state: StateBlock, start_line: int, end_line: int, silent: bool) -> Any:
        try:
            first = state.src[state.bMarks[start_line] + state.tShift[start_line]]
        except IndexError:  # at the very end: the rule decides, as before
            return rule(state, start_line, end_line, silent)
        if first not in chars:
            return False
        return rule(state, start_line, end_line, silent)

    return gated
