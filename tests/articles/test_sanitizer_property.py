"""Property: whatever Markdown and hostile HTML an article holds, with raw HTML off or on, the HTML that
comes out contains no element, attribute or URL that runs script (read back with an HTML parser)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles.render import render_markdown

from .html_safety import script_hazards

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href="java\tscript:x">',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>',
    '<img src="data:image/svg+xml,<svg onload=alert(1)>">',
    "<iframe src=https://evil.example></iframe>",
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    '<iframe src="javascript:alert(1)"></iframe>',
    "<style>*{color:red}</style>",
    '<div style="x:expression(1)">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "<object data=x.swf></object>",
    "<embed src=x.swf>",
    "<form action=https://evil.example><button>go</button></form>",
    "<base href=//evil/>",
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<details open ontoggle="alert(1)">',
    "<input autofocus onfocus=alert(1)>",
    "<body onload=alert(1)>",
    "<!--><script>alert(1)</script>-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    '<a href="  javascript:alert(1)">',
    "<textarea><script>",
    "<template><script>alert(1)</script></template>",
    "<xmp><script>alert(1)</script></xmp>",
    '<h2 id="x" onclick="alert(1)">h</h2>',
    '<td style="background:url(javascript:x)">',
]
MARKDOWN = [
    "\n",
    "\n\n",
    " ",
    "# ",
    "## ",
    "> ",
    "- ",
    "1. ",
    "- [ ] ",
    "```",
    "```js:a.js\n",
    "```diff js\n",
    "~~~",
    ":::message\n",
    ":::details x\n",
    ":::\n",
    "| a | b |\n|---|---|\n| ",
    " | ",
    "$",
    "$$\n",
    "[^1]",
    "[^1]: ",
    "[x](",
    ")",
    "![a](",
    " =10x20",
    "<",
    ">",
    "&",
    "&#",
    '"',
    "'",
    "`",
    "*",
    "_",
    "https://example.com/",
    "@[youtube](",
    "@[card](",
    "@[tweet](",
    "javascript:alert(1)",
    "<br>",
    "<!--",
    "-->",
    "/images/a.png",
    "x",
]

bodies = st.lists(st.sampled_from(HOSTILE) | st.sampled_from(MARKDOWN), max_size=40).map("".join)


@pytest.mark.parametrize("allow_raw_html", [False, True])
@pytest.mark.parametrize("markup", HOSTILE)
def test_each_hostile_snippet_is_inert(markup: str, allow_raw_html: bool) -> None:
    for body in (
        markup,
        f"text {markup} text",
        f"- {markup}",
        f":::message\n{markup}\n:::",
        f"| {markup} |\n|-|",
    ):
        html = render_markdown(body, allow_raw_html=allow_raw_html)
        assert script_hazards(html) == [], (body, html)


@FUZZ
@given(bodies, st.booleans())
def test_generated_markdown_with_hostile_html_is_inert(body: str, allow_raw_html: bool) -> None:
    html = render_markdown(body, allow_raw_html=allow_raw_html)
    assert script_hazards(html) == [], html


@FUZZ
@given(st.text(max_size=300), st.booleans())
def test_any_text_is_inert(body: str, allow_raw_html: bool) -> None:
    assert script_hazards(render_markdown(body, allow_raw_html=allow_raw_html)) == []
