"""The one sanitizer every rendered article goes through, whatever the settings: nh3 (ammonia).

Explicit allowlists of tags, attributes and URL schemes. Nothing that runs script survives: no
``<script>``/``<style>`` (dropped with their content), no ``<meta>``/``<object>``/``<embed>``/``<form>``/
``<base>``/``<svg>``, no event-handler or ``style`` attribute (except ``text-align`` on table cells), no
``javascript:``/``vbscript:`` URL, ``data:`` only as an ``<img>`` source of a raster image type, and an
``<iframe>`` keeps its ``src`` only when it is one of the embed forms (``embeds.IFRAME_SOURCES``).
Repository images (``/images/…``, ``images/…``) are rewritten against the asset base URL here, so raw
``<img>`` tags get the same treatment as Markdown images.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import nh3

from function.articles.embeds import is_allowed_iframe_src

_MATHML_TAGS = {
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac",
    "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
    "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none", "semantics", "annotation",
}  # fmt: skip
_MATHML_ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "accent",
    "accentunder", "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
    "frame", "width", "height", "depth", "linethickness", "displaystyle", "scriptlevel", "minsize",
    "maxsize", "movablelimits", "notation", "form", "largeop", "symmetric", "encoding",
}  # fmt: skip

_TEXT_TAGS = {
    "p", "br", "hr", "em", "strong", "b", "i", "u", "s", "del", "ins", "mark", "small", "sub", "sup",
    "kbd", "abbr", "cite", "q", "wbr", "ruby", "rt", "rp", "blockquote", "pre", "code", "span", "div",
    "aside", "section", "details", "summary", "figure", "figcaption", "ul", "ol", "li", "dl", "dt", "dd",
    "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th", "colgroup", "col",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "iframe", "input",
}  # fmt: skip

ALLOWED_TAGS = frozenset(_TEXT_TAGS | _MATHML_TAGS)

_CLASSED = {"a", "aside", "code", "div", "li", "ol", "p", "pre", "section", "span", "sup", "ul", "hr", "img"}
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    **{tag: {"class"} for tag in _CLASSED},
    "a": {"class", "href", "title", "id"},
    "img": {"class", "src", "alt", "title", "width", "height", "loading"},
    "li": {"class", "id"},
    "ol": {"class", "start"},
    "td": {"style", "colspan", "rowspan"},
    "th": {"style", "colspan", "rowspan"},
    "details": {"open"},
    "abbr": {"title"},
    "input": {"class", "checked"},
    "iframe": {"src", "allow", "allowfullscreen", "loading", "width", "height", "title"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
    **{tag: set(_MATHML_ATTRIBUTES) for tag in _MATHML_TAGS},
}
URL_SCHEMES = frozenset({"http", "https", "mailto", "data"})
_DATA_IMAGE = re.compile(r"data:image/(?:png|gif|jpeg|webp)[;,]", re.IGNORECASE)
_REPO_IMAGE = re.compile(r"/?images/")


def sanitize(html: str, *, asset_base_url: str | None = None) -> str:
    """``html`` with everything outside the allowlists removed (see the module docstring)."""
    return _cleaner(asset_base_url).clean(html)


def repository_images(html: str) -> list[str]:
    """Image sources in sanitized ``html`` that still point into the repository (no base URL set)."""
    return re.findall(r'<img [^>]*?src="(/?images/[^"]*)"', html)


@functools.lru_cache(maxsize=8)
def _cleaner(asset_base_url: str | None) -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style", "template", "noscript", "textarea", "title", "xmp"},
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_attribute_filter(asset_base_url),
        strip_comments=True,
        link_rel="nofollow noopener noreferrer",
        url_schemes=set(URL_SCHEMES),
        # A disabled checkbox: the task lists' boxes show state, they are not a form.
        tag_attribute_values={"input": {"type": {"checkbox"}}},
        set_tag_attribute_values={"input": {"disabled": "", "type": "checkbox"}},
        filter_style_properties={"text-align"},
    )


def _attribute_filter(asset_base_url: str | None) -> Callable[[str, str, str], str | None]:
    base = asset_base_url.rstrip("/") if asset_base_url else None

    def keep(element: str, attribute: str, value: str) -> str | None:
        if attribute in ("href", "src"):
            stripped = value.strip()
            if stripped[:5].lower() == "data:":
                ok = element == "img" and attribute == "src" and _DATA_IMAGE.match(stripped)
                return value if ok else None
            if element == "iframe":
                return value if is_allowed_iframe_src(stripped) else None
            if element == "img" and base and _REPO_IMAGE.match(stripped):
                return f"{base}/{stripped.lstrip('/')}"
        return value

    return keep
