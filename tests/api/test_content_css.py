"""GET /static/content.css: served and cacheable, scoped to one class, and a style for everything the
renderer emits.

The coverage test renders every fixture article (Zenn's examples, the feature article, the books' chapters)
plus a few forms the fixtures lack, collects each element, class and attribute the HTML carries, and fails
for one that no rule of the stylesheet names (a new element or class from the renderer must get a style,
or a reason below why it needs none). The browser tests check what the rules look like once applied.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES

from function.api.content_css import DARK_STYLE, SCOPE, stylesheet, version
from function.articles.highlight import STYLE
from function.articles.render import render_article

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Forms the fixture articles do not hold: a formula latex2mathml cannot read, "$$…$$" inside a line, a
# tweet, a Docswell deck and a bare YouTube URL on their own lines, a numbered equation, a details block
# without a title. (With these, Zenn's whole set of example articles adds nothing the fixtures lack.)
EXTRA_MARKDOWN = """
Inline display $$a^2$$ in text, and one it cannot read: $\\begin{foo}$.

$$
E = mc^2
$$ (1)

@[tweet](https://twitter.com/jack/status/20)

@[docswell](https://www.docswell.com/s/ku-suke/LK7J5V-hello-docswell)

https://www.youtube.com/watch?v=dQw4w9WgXcQ

:::details
hidden
:::

| a | b |
|:-:|--:|
| 1 | 2 |
"""

# Elements that need no rule of their own, and why.
UNSTYLED_ELEMENTS = {
    "br": "a line break has no box to style",
    "span": "a generic inline container: each one the renderer emits carries a class, styled below",
    "div": "a generic block container: each one the renderer emits carries a class, styled below",
    "section": "only the footnotes' section, styled by its class",
    "thead": "table parts are styled through table, th and td",
    "tbody": "table parts are styled through table, th and td",
    "tr": "table parts are styled through table, th and td",
}
# MathML inside <math>: laid out by the browser's own MathML engine; <math> itself is styled.
MATHML_INSIDE = {
    "annotation", "semantics", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub",
    "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle",
    "mpadded", "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none",
}  # fmt: skip
# Attributes that need no selector, and why.
UNSTYLED_ATTRIBUTES = {
    "href": "a link's target, not its look",
    "rel": "a link's relation to the page",
    "alt": "text for readers who do not see the image",
    "loading": "when the browser loads it",
    "allow": "an iframe's permissions",
    "allowfullscreen": "an iframe's permissions",
    "sandbox": "an iframe's permissions",
    "referrerpolicy": "an iframe's referrer",
    "width": "an image's own size, capped by img { max-width: 100% }",
    "height": "an image's own size, kept in proportion by img { height: auto }",
    "style": "the renderer's inline text-align of table cells and the hidden <br> beside a link card",
    "checked": "the browser draws a checked box",
    "disabled": "a task list's box shows state; the browser draws it",
    "start": "a list's first number",
    "encoding": "MathML's source annotation, never shown",
    "mathvariant": "MathML's own, applied by the browser",
    "stretchy": "MathML's own, applied by the browser",
    "columnspacing": "MathML's own, applied by the browser",
    "rowspacing": "MathML's own, applied by the browser",
    "displaystyle": "MathML's own, applied by the browser",
    "columnalign": "MathML's own, applied by the browser",
}
# Classes that need no rule, by prefix, and why.
UNSTYLED_CLASS_PREFIXES = {"language-": "the code's language, a hook for a client-side highlighter"}


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: set[str] = set()
        self.classes: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.add(tag)
        for name, value in attrs:
            if name == "class":
                self.classes.update((value or "").split())
            else:
                self.attributes.add(name)


def _markdown_bodies() -> Iterator[str]:
    for path in sorted(FIXTURES.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("---"):
            text = text.split("---", 2)[2]
        yield text
    yield EXTRA_MARKDOWN


@pytest.fixture(scope="module")
def emitted() -> _Collector:
    collector = _Collector()
    for body in _markdown_bodies():
        collector.feed(render_article(body).html)
    return collector


class _Selectors:
    """Every selector of the stylesheet's rules that declare something, read by its parts."""

    def __init__(self, css: str) -> None:
        text = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
        self.rules = [
            (selector.strip(), body.strip())
            for selector, body in re.findall(r"([^{}@]+)\{([^{}]*)\}", text)
            if body.strip()
        ]
        selectors = [part.strip() for selector, _ in self.rules for part in selector.split(",")]
        self.complex = selectors
        joined = " ".join(selectors)
        self.classes = set(re.findall(r"\.(-?[A-Za-z_][\w-]*)", joined))
        self.attributes = set(re.findall(r"\[([\w-]+)", joined))
        # A type selector starts a compound: at the start, or after a combinator or "(" (in :not(...)).
        self.elements = set(re.findall(r"(?:^|[\s>+~(])([a-z][a-z0-9]*)", " " + joined))


@pytest.fixture(scope="module")
def selectors() -> _Selectors:
    return _Selectors(stylesheet())


def test_every_element_the_renderer_emits_has_a_style(emitted: _Collector, selectors: _Selectors) -> None:
    # The fixtures reach the renderer's whole vocabulary, or this test would prove little.
    assert {"aside", "details", "iframe", "math", "table", "input", "img", "pre"} <= emitted.elements
    unexplained = emitted.elements - selectors.elements - set(UNSTYLED_ELEMENTS) - MATHML_INSIDE
    assert not unexplained, f"no rule of content.css styles these elements: {sorted(unexplained)}"


def test_every_class_the_renderer_emits_has_a_style(emitted: _Collector, selectors: _Selectors) -> None:
    assert {
        "msg",
        "alert",
        "link-card",
        "code-block-filename",
        "diff-add",
        "embed-youtube",
    } <= emitted.classes
    plain_code = _classes_neither_highlight_style_colours()
    unexplained = {
        name
        for name in emitted.classes - selectors.classes - plain_code
        if not name.startswith(tuple(UNSTYLED_CLASS_PREFIXES))
    }
    assert not unexplained, f"no rule of content.css styles these classes: {sorted(unexplained)}"


def test_every_attribute_the_renderer_emits_is_styled_or_needs_no_style(
    emitted: _Collector, selectors: _Selectors
) -> None:
    unexplained = emitted.attributes - selectors.attributes - set(UNSTYLED_ATTRIBUTES)
    assert not unexplained, f"no rule of content.css uses these attributes: {sorted(unexplained)}"


def test_the_exemptions_are_not_stale(emitted: _Collector, selectors: _Selectors) -> None:
    # An exemption for something the renderer no longer emits, or that is now styled, is removed.
    for element in UNSTYLED_ELEMENTS:
        assert element in emitted.elements, f"{element} is no longer emitted"
    stale = {name for name in UNSTYLED_ATTRIBUTES if name in selectors.attributes}
    assert not stale, f"styled now, drop the exemption: {stale}"


def test_a_class_nothing_styles_fails_the_check(selectors: _Selectors) -> None:
    # GIVEN the renderer emitted a class content.css has never heard of
    collector = _Collector()
    collector.feed('<aside class="msg brand-new-box">x</aside>')
    # THEN the check names it
    assert collector.classes - selectors.classes == {"brand-new-box"}


def test_every_rule_is_scoped_to_the_content_class(selectors: _Selectors) -> None:
    scope = re.compile(re.escape(SCOPE) + r"(?![\w-])")
    outside = [selector for selector in selectors.complex if not scope.search(selector)]
    assert not outside, f"rules that could leak into a site: {outside}"
    assert len(selectors.rules) > 100


def test_light_and_dark_themes_and_both_forcing_classes_are_there() -> None:
    css = stylesheet()
    assert "@media (prefers-color-scheme: dark)" in css
    for forced in (
        f"{SCOPE}-dark {SCOPE}",
        f"{SCOPE}{SCOPE}-dark",
        f"{SCOPE}-light {SCOPE}",
        f"{SCOPE}{SCOPE}-light",
    ):
        assert forced in css
    # Every colour property a rule reads is set by the light and the dark theme alike.
    used = set(re.findall(r"var\((--bc-[\w-]+)\)", css))
    for theme in (f"{SCOPE}-light {SCOPE},", f"{SCOPE}-dark {SCOPE},"):
        blocks = re.findall(re.escape(theme) + r"[^{]*\{([^}]*)\}", css)
        defined = {name for block in blocks for name in re.findall(r"(--bc-[\w-]+)\s*:", block)}
        assert used <= defined, f"{theme} leaves unset: {sorted(used - defined)}"


def test_code_colours_come_from_both_highlight_styles() -> None:
    css = stylesheet()
    keyword = get_style_by_name(STYLE).style_for_token(_token_of("k"))["color"]
    dark_keyword = get_style_by_name(DARK_STYLE).style_for_token(_token_of("k"))["color"]
    assert keyword and dark_keyword and keyword != dark_keyword
    assert f"--bc-hl-k: #{keyword};" in css and f"--bc-hl-k: #{dark_keyword};" in css
    assert f"{SCOPE} pre.highlight .k {{ color: var(--bc-hl-k)" in css


def test_content_css_is_served_with_a_strong_etag_and_a_day_of_caching(lambda_client: FlaskClient) -> None:
    response = lambda_client.get("/static/content.css")
    assert response.status_code == 200
    assert response.mimetype == "text/css"
    assert response.get_data(as_text=True) == stylesheet()
    assert response.headers["ETag"] == f'"{_etag_of(stylesheet())}"'
    assert response.headers["Cache-Control"] == "public, max-age=86400"


def test_content_css_answers_304_to_its_own_etag(lambda_client: FlaskClient) -> None:
    etag = lambda_client.get("/static/content.css").headers["ETag"]
    again = lambda_client.get("/static/content.css", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.get_data() == b""


def test_the_versioned_url_is_cached_for_good_and_another_version_for_a_day(
    lambda_client: FlaskClient,
) -> None:
    current = lambda_client.get(f"/static/content.css?v={version()}")
    assert current.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    stale = lambda_client.get("/static/content.css?v=0000000000000000")
    assert stale.headers["Cache-Control"] == "public, max-age=86400"


def test_content_css_is_gzipped_for_clients_that_accept_it(lambda_client: FlaskClient) -> None:
    response = lambda_client.get("/static/content.css", headers={"Accept-Encoding": "gzip"})
    assert response.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(response.get_data()).decode() == stylesheet()


def test_highlight_css_now_revalidates_too(lambda_client: FlaskClient) -> None:
    etag = lambda_client.get("/static/highlight.css").headers["ETag"]
    assert lambda_client.get("/static/highlight.css", headers={"If-None-Match": etag}).status_code == 304


def _classes_neither_highlight_style_colours() -> set[str]:
    """Pygments' classes for tokens that both styles leave as plain text: the block's colour is theirs."""
    light, dark = get_style_by_name(STYLE), get_style_by_name(DARK_STYLE)
    plain = set()
    for token, name in STANDARD_TYPES.items():
        lit, drk = light.style_for_token(token), dark.style_for_token(token)
        if name and not any(lit[k] or drk[k] for k in ("color", "bgcolor", "bold", "italic", "underline")):
            plain.add(name)
    return plain


def _token_of(css_class: str) -> object:
    return next(token for token, name in STANDARD_TYPES.items() if name == css_class)


def _etag_of(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:32]
