"""Highlighted code kept out of the sanitizer comes back exactly as the sanitizer would have written it.

The reference is the plain form: the whole fence, code included, through the sanitizer.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles.code_bodies import CodeBodies
from function.articles.highlight import Budget, render_fence
from function.articles.render import render_markdown
from function.articles.sanitize import sanitize

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Where a fence can stand in a page without author HTML (list, quote, details, footnote, message).
FOOTNOTES = '<section class="footnotes">\n<ol class="footnotes-list">\n<li class="footnote-item">'
CONTEXTS = [
    ("", ""),
    ("<ul>\n<li>\n", "</li>\n</ul>\n"),
    ("<blockquote>\n", "</blockquote>\n"),
    ("<details><summary>s</summary>\n", "</details>\n"),
    (FOOTNOTES, "</li>\n</ol>\n</section>\n"),
    ('<aside class="msg message">\n', "</aside>\n"),
]
INFOS = ["", "python", "ts:src/a.ts", "diff js", "js diff", "diff", "bash", "html", "json", "nosuchlang"]
TRICKY = [
    '"', "&", "&amp;", "<", ">", "'", "\u00a0", "\t", "\n", "\r", "\x00", "\x0c", "\x85", "\ufffe",
    "\U0001fffe", "\ue002", "\ue003", "日本語", "🐍", "x", " ", "+", "-", '<span class="k">', "</span>",
    "&quot;", "&nbsp;",
]  # fmt: skip
LINES = ['print("a & b")', "if (a < b && c > d) {", "  return '<x>';", "}", "-x", "+y"]
code = st.one_of(
    st.lists(st.sampled_from(TRICKY), max_size=40).map("".join),
    st.text(max_size=60),
    st.lists(st.sampled_from(LINES), max_size=8).map("\n".join),
)


def both(code: str, info: str, before: str, after: str) -> tuple[str, str]:
    plain = sanitize(before + render_fence(code, info, Budget()) + after)
    bodies = CodeBodies()
    kept_out = sanitize(before + render_fence(code, info, Budget(), bodies) + after)
    return plain, bodies.put_in(kept_out)


@FUZZ
@given(code, st.sampled_from(INFOS), st.sampled_from(CONTEXTS))
def test_a_fence_with_its_code_kept_out_is_what_the_sanitizer_writes(
    code: str, info: str, context: tuple[str, str]
) -> None:
    plain, fast = both(code, info, *context)
    assert fast == plain


def test_quotes_and_no_break_spaces_are_written_as_the_sanitizer_writes_them() -> None:
    plain, fast = both('say("a\u00a0b")', "", "", "")
    assert fast == plain
    assert '<code>say("a&nbsp;b")</code>' in fast


def test_code_with_characters_the_parser_could_change_stays_in_the_page() -> None:
    bodies = CodeBodies()
    assert bodies.keep_out("a\rb") == "a\rb"
    assert bodies.keep_out("a\x00b") == "a\x00b"
    assert bodies.put_in("<p>x</p>") == "<p>x</p>"


def test_an_author_cannot_forge_a_marker() -> None:
    html = render_markdown("```python\nx = 1\n```\n\n\ue002deadbeefdeadbeef:0\ue003 `\ue002x:0\ue003`")
    assert html.count('<span class="n">x</span>') == 1
    assert "\ue002deadbeefdeadbeef:0\ue003" in html


def test_with_raw_html_on_code_goes_through_the_sanitizer_in_place() -> None:
    markdown = '<table><tr><td>\n\n```python\nprint("<b>")\n```\n\n</td></tr></table>'
    html = render_markdown(markdown, allow_raw_html=True)
    assert '<span class="nb">print</span>' in html
    assert "\ue002" not in html
