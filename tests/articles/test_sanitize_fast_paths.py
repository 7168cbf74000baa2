"""The sanitizer's fast paths give exactly what their plain forms give, on generated HTML.

The plain forms are kept here as the reference: they are what the code did before it was made faster,
and any input on which the two differ is a bug in the fast one.
"""

from __future__ import annotations

import re
from html import unescape as html_unescape

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles.embeds import iframe_policy
from function.articles.sanitize import _fix_iframes

FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_TAG_OR_TEXT = re.compile(r'<(?:[^>"]|"[^"]*")*>|[^<]+|<')
_IFRAME_OPEN = re.compile(r"<iframe(?=[\s>/])")
_SRC = re.compile(r'\ssrc="([^"]*)"')


def plain_fix_iframes(html: str) -> str:
    """Every token of the page through a Python callback: the form before the fast path."""
    if "<iframe" not in html:
        return html

    def fix(match: re.Match[str]) -> str:
        token = match[0]
        if not _IFRAME_OPEN.match(token):
            return token
        src = _SRC.search(token)
        policy = iframe_policy(html_unescape(src[1]) if src else None)
        fixed = f' sandbox="{policy.sandbox}" referrerpolicy="{policy.referrerpolicy}"'
        if policy.allow:
            fixed = f' allow="{policy.allow}"' + fixed
        return f"{token[:-1]}{fixed}>"

    return _TAG_OR_TEXT.sub(fix, html)


PIECES = [
    "<iframe",
    "<iframe ",
    "<iframe>",
    "<iframe/",
    "<iframex>",
    "<IFRAME ",
    "</iframe>",
    ' src="https://www.youtube-nocookie.com/embed/abc"',
    ' src="https://codepen.io/a/embed/b"',
    ' src="https://evil.example/"',
    ' src="&#104;ttps://www.youtube-nocookie.com/embed/x"',
    ' width="100%"',
    ' title="a > b"',
    ' title="<iframe src=x>"',
    '"',
    ">",
    "<",
    '<a href="x">',
    "<p>",
    "</p>",
    "<br>",
    "text",
    "\n",
    "\t",
    "\u3000",
    "&amp;",
]


@FUZZ
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_fixing_iframes_reads_the_page_as_the_plain_form_does(html: str) -> None:
    assert _fix_iframes(html) == plain_fix_iframes(html)


@FUZZ
@given(st.text(alphabet='<>"/ =\nifrmaesc', max_size=80))
def test_fixing_iframes_agrees_on_any_mix_of_the_characters_that_matter(html: str) -> None:
    assert _fix_iframes(html) == plain_fix_iframes(html)


def test_an_iframe_after_thousands_of_tags_still_gets_its_policy() -> None:
    html = "<p>x</p>" * 5000 + '<iframe src="https://evil.example/"></iframe>' + "<br>" * 5000
    fixed = _fix_iframes(html)
    assert fixed == plain_fix_iframes(html)
    assert '<iframe src="https://evil.example/" sandbox="' in fixed
