"""Formulas are put into the page only where the renderer's own wrapper holds their marker, never into an
attribute an author left open (raw HTML on).

The page is read as a browser reads it: html5lib implements the WHATWG parsing algorithm, as Chromium
does. Before the fix, a ``<math display="…">`` written into an ``<iframe title='…`` ended the attribute
and the tag: the embed ran with no ``sandbox`` and no ``allow``.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

import html5lib
import pytest

from function.articles.render import render_markdown

EMBED = "https://www.youtube-nocookie.com/embed/abcdefghijk"
FORMULAS = ["$x$", "$$y$$", "$$\nz\n$$", "$$\nw\n$$ (1)", "a $x$ b $$y$$ c"]
# Each opens an attribute with a quote that the next paragraphs (formula included) fall into.
OPENERS = {
    "iframe": f'<iframe src="{EMBED}" title=\'',
    "iframe, double quote": f'<iframe src="{EMBED}" title="',
    "ol": "<ol start=1 class='",
    "h2": "<h2 id='",
    "li": "<ul><li class='",
    "details": "<details open='",
    "img": "<p><img src='/a.png' alt='",
    "a": "<p><a href='https://example.com/' title='",
}
CLOSERS = {
    "iframe": "' ></iframe>",
    "iframe, double quote": '" ></iframe>',
    "ol": "'><li>a</li></ol>",
    "h2": "'>Heading</h2>",
    "li": "'>a</li></ul>",
    "details": "'><summary>s</summary>d</details>",
    "img": "'></p>",
    "a": "'>link</a></p>",
}


MATHML = "{http://www.w3.org/1998/Math/MathML}"


def parsed(html: str) -> Element:
    return html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)


def formulas(tree: Element) -> list[str | None]:
    """The TeX source of each ``<math>`` in the page, in order."""
    return [math.findtext(f".//{MATHML}annotation") for math in tree.iter(f"{MATHML}math")]


def elements(html: str, tag: str) -> list[Element]:
    return list(parsed(html).iter(tag))


@pytest.mark.parametrize("formula", FORMULAS)
@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_a_formula_inside_an_open_attribute_never_becomes_markup(opener: str, formula: str) -> None:
    source = f"{OPENERS[opener]}\n\n{formula}\n\nend{CLOSERS[opener]}\n\nafter $k$\n"
    html = render_markdown(source, allow_raw_html=True)
    tree = parsed(html)
    # The only formula in the page is the one written where formulas go (the last paragraph's), once at
    # most: after an unclosed iframe the browser reads the rest as the iframe's fallback text.
    found = formulas(tree)
    assert found == ["k"] or (opener.startswith("iframe") and found == []), html
    # No attribute of any element comes from MathML markup, and none holds a marker.
    for element in tree.iter():
        for name, value in element.attrib.items():
            assert name.isascii() and name.replace("-", "").isalpha(), (element.tag, name, html)
            assert "\ue000" not in value and "<math" not in value, (element.tag, name)


@pytest.mark.parametrize("formula", FORMULAS)
@pytest.mark.parametrize("quote", ["'", '"'])
def test_an_embed_keeps_its_sandbox_and_allow_whatever_falls_into_its_title(formula: str, quote: str) -> None:
    source = f"<iframe src={quote}{EMBED}{quote} title={quote}\n\n{formula}\n\nend{quote} ></iframe>\n"
    html = render_markdown(source, allow_raw_html=True)
    [iframe] = elements(html, "iframe")
    assert iframe.get("src") == EMBED
    assert iframe.get("sandbox") == "allow-scripts allow-same-origin allow-popups allow-presentation"
    assert "encrypted-media" in (iframe.get("allow") or "")
    assert iframe.get("referrerpolicy") == "strict-origin-when-cross-origin"


@pytest.mark.parametrize("raw", [False, True], ids=["raw-off", "raw-on"])
def test_formulas_in_their_own_wrappers_are_all_put_in(raw: bool) -> None:
    html = render_markdown("a $x$ b\n\n$$y$$\n\n$$\nz\n$$\n\n$$\nw\n$$ (1)\n", allow_raw_html=raw)
    assert formulas(parsed(html)) == ["x", "y", "z", "w"]
    assert "\ue000" not in html
