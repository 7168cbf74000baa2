"""``$…$`` / ``$$…$$`` → MathML, which browsers render without any script (latex2mathml).

Each formula's MathML is made safe on its own, before it joins the page:

* latex2mathml's ``convert`` serializes its tree and then *unescapes* the whole string (to turn the
  ``&#x…;`` references it stores as text into characters), which also turns an author's
  ``\\text{<iframe …>}`` back into a live tag inside ``<mtext>``, where browsers parse HTML. Here the
  tree is serialized by us instead: its character references are decoded in each text and attribute, and
  everything is escaped once, so an author's ``<``/``&`` stay text.
* The result then goes through a cleaner whose allowlist holds MathML elements and attributes only, so no
  HTML element (``iframe``, ``img``, ``a``…) can stand inside ``<math>`` whatever latex2mathml emits.

The page's own sanitizer allows no MathML at all: ``render`` puts each formula in after sanitizing.
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any
from xml.etree.ElementTree import Element, SubElement, tostring

import nh3
from latex2mathml.converter import Converter
from markdown_it.common.utils import escapeHtml

from function.articles.limits import check_budget

# latex2mathml recurses per group; a formula longer than this is shown as its source instead.
MAX_FORMULA_CHARS = 5000

MATHML_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac",
    "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
    "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none", "semantics", "annotation",
})  # fmt: skip
MATHML_ATTRIBUTES = frozenset({
    "display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "accent",
    "accentunder", "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
    "frame", "width", "height", "depth", "linethickness", "displaystyle", "scriptlevel", "minsize",
    "maxsize", "movablelimits", "notation", "form", "largeop", "symmetric", "encoding",
})  # fmt: skip

_CHAR_REF = re.compile(r"&#(?:[xX][0-9A-Fa-f]{1,6}|[0-9]{1,7});")
# C0 controls (but tab and newline) and DEL mean nothing in a formula; a decoded "&#1;" is dropped.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def render_math(latex: str, options: dict[str, Any]) -> str:
    """Safe MathML for ``latex``; a formula latex2mathml cannot read is shown as escaped ``<code>``."""
    check_budget()
    display = "block" if options.get("display_mode") else "inline"
    if len(latex) <= MAX_FORMULA_CHARS:
        try:
            return _mathml(latex, display)
        except RecursionError:
            return _source(latex)
    return _source(latex)


# The same formula comes back often (within an article and across a repository's); its markup depends on
# nothing but the formula and the display, so it is made once per process (a few MB at most). A
# RecursionError depends on how deep the caller already was, so it is raised, never remembered.
@functools.lru_cache(maxsize=2048)
def _mathml(latex: str, display: str) -> str:
    try:
        tree = Converter(display=display).convert_to_element(latex)
        _decode_tree(tree)
        return clean_mathml(tostring(_with_source(tree, latex), encoding="unicode"))
    except RecursionError:
        raise
    # latex2mathml raises its own errors, but also IndexError/KeyError on odd input.
    except Exception:  # noqa: BLE001
        return _source(latex)


def clean_mathml(markup: str) -> str:
    """``markup`` with every element and attribute that is not MathML removed (their text kept)."""
    return _mathml_cleaner().clean(markup)


def _with_source(math: Element, latex: str) -> Element:
    """``<math><semantics>…<annotation encoding="application/x-tex">`` as KaTeX writes it: browsers show
    the MathML; the TeX stays for copying, assistive tools and the parity tool's comparison with Zenn."""
    semantics = Element("semantics")
    if len(math) == 1:
        semantics.append(math[0])
    else:
        row = SubElement(semantics, "mrow")
        row.extend(list(math))
    annotation = SubElement(semantics, "annotation", {"encoding": "application/x-tex"})
    annotation.text = latex
    for child in list(math):
        math.remove(child)
    math.append(semantics)
    return math


def _decode_tree(tree: Element) -> None:
    for element in tree.iter():
        if element.text:
            element.text = _decode(element.text)
        if element.tail:
            element.tail = _decode(element.tail)
        for name, value in element.attrib.items():
            element.attrib[name] = _decode(value)


def _decode(text: str) -> str:
    # Only numeric references: latex2mathml writes its symbols as "&#x0222B;"; any other "&" is text.
    return _CONTROLS.sub("", _CHAR_REF.sub(lambda m: html.unescape(m[0]), text))


@functools.cache
def _mathml_cleaner() -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=set(MATHML_TAGS),
        clean_content_tags={"script", "style", "template", "noscript", "textarea", "title", "xmp"},
        attributes={tag: set(MATHML_ATTRIBUTES) for tag in MATHML_TAGS},
        strip_comments=True,
        url_schemes=set(),
        link_rel=None,
    )


def _source(latex: str) -> str:
    return f'<code class="math-source">{escapeHtml(latex)}</code>'
