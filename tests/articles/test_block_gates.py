"""The block-rule gates change nothing: every article renders to the same tokens and HTML with and
without them, on Zenn's example articles, this project's examples and generated Markdown whose lines
start with every kind of marker, nested in quotes, lists and containers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from function.articles.block_gates import BLOCK_RULE_FIRST_CHARS
from function.articles.highlight import Budget
from function.articles.render import Formulas, build_renderer

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# What a line may start with (each rule's marker, and what looks like one) and what may follow.
LINE_STARTS = [
    "", " ", "   ", "    ", "\t", "> ", ">", "- ", "-", "* ", "+ ", "1. ", "2) ", "10. ", "9. ", "0) ",
    "#", "# ", "## ", "```", "~~~", "```ts:a.ts", "---", "***", "___", "$$", "$$a$$", "$$\na\n$$", "$",
    ":::message", ":::details x", ":::",
    "::::", "@[youtube](abc)", "@[card](https://e.com)", "@[", "[^1]: ", "[^1]:", "[a]: /u", "[",
    "<!-- c -->", "<div>", "<", "|", "| a | b |", "|---|---|", "===", "a", "日本", "\\", "`", "!",
]  # fmt: skip
LINE_RESTS = ["", "text", " x", "*y*", "$$", " -->", "|", "1", " ```", ":::", "\\"]

lines = st.tuples(st.sampled_from(LINE_STARTS), st.sampled_from(LINE_RESTS)).map("".join)
documents = st.lists(lines, max_size=25).map("\n".join)


def _env() -> dict[str, Any]:
    return {"highlight_budget": Budget(), "formulas": Formulas(), "code_bodies": None}


def _both(text: str, *, allow_raw_html: bool) -> tuple[Any, Any]:
    outputs = []
    for md in (_gated[allow_raw_html], _ungated[allow_raw_html]):
        env = _env()
        tokens = md.parse(text, env)
        outputs.append(([t.as_dict() for t in tokens], md.renderer.render(tokens, md.options, env)))
    return outputs[0], outputs[1]


_gated: dict[bool, MarkdownIt] = {flag: build_renderer(flag) for flag in (False, True)}
_ungated: dict[bool, MarkdownIt] = {flag: build_renderer(flag, gated=False) for flag in (False, True)}


def _scrub_markers(output: Any) -> str:
    # Each render's formula markers carry a fresh secret: compare what surrounds them.
    return _MARKER_SECRET.sub("<formula>", repr(output))


_MARKER_SECRET = re.compile(r"\\ue000[0-9a-f]+:")


def test_every_gated_rule_is_a_rule_of_the_renderer() -> None:
    names = {rule.name for rule in _gated[False].block.ruler.__rules__}
    assert set(BLOCK_RULE_FIRST_CHARS) <= names


@FUZZ
@given(documents, st.booleans())
def test_generated_markdown_parses_and_renders_the_same_gated_or_not(text: str, allow_raw_html: bool) -> None:
    gated, ungated = _both(text, allow_raw_html=allow_raw_html)
    assert _scrub_markers(gated) == _scrub_markers(ungated)


# Where a line may stand: first, after a paragraph's line (may it end the paragraph?), after a blank
# line, and inside a quote, a list item and a container.
CONTEXTS = ["", "para\n", "para\n\n", "> ", "> para\n> ", "- item\n  ", "1. a\n   ", ":::message\n"]


@pytest.mark.parametrize("context", CONTEXTS)
def test_every_line_start_in_every_context_parses_the_same_gated_or_not(context: str) -> None:
    for start in LINE_STARTS:
        for rest in ("", " x", "text"):
            text = f"{context}{start}{rest}\nnext\n"
            gated, ungated = _both(text, allow_raw_html=False)
            assert _scrub_markers(gated) == _scrub_markers(ungated), text


FILES = sorted([*(ROOT / "tests" / "fixtures" / "zenn").rglob("*.md"), *(ROOT / "examples").rglob("*.md")])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_real_articles_parse_and_render_the_same_gated_or_not(path: Path) -> None:
    text = path.read_text()
    for allow_raw_html in (False, True):
        gated, ungated = _both(text, allow_raw_html=allow_raw_html)
        assert _scrub_markers(gated) == _scrub_markers(ungated)
