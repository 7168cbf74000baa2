"""The one sanitizer every rendered article goes through, whatever the settings: nh3 (ammonia).

Explicit allowlists of tags, attributes and URL schemes. Nothing that runs script survives: no
``<script>``/``<style>`` (dropped with their content), no ``<meta>``/``<object>``/``<embed>``/``<form>``/
``<base>``/``<svg>``/``<math>`` (formulas are cleaned on their own and put in afterwards, see ``mathml``),
no event-handler or ``style`` attribute (except ``text-align`` on table cells and Zenn's hidden ``<br>``),
no ``javascript:``/``vbscript:`` URL, ``data:`` only as an ``<img>`` source of a raster image type. URLs
are read as browsers read them first (C0 controls and spaces around them stripped, tabs and newlines
removed). An ``<iframe>`` keeps its ``src`` only when it is one of the embed forms
(``embeds.IFRAME_SOURCES``); its ``allow``/``sandbox``/``referrerpolicy`` are never the author's but
fixed per host (``embeds.IFRAME_POLICIES``), and its width/height are bounded. The renderer's own ids
pass as they are; an author's id only as ``user-content-…`` and never a name front ends read
(``ids.sanitized_id``). Image sources are kept as written: a repository image becomes a URL only when
it is served (``images.compose``), so raw ``<img>`` tags get the same treatment as Markdown images.
"""

from __future__ import annotations

import functools
import re
from html import unescape as html_unescape

import nh3

from function.articles.embeds import iframe_policy, is_allowed_iframe_src
from function.articles.ids import sanitized_id

_TEXT_TAGS = {
    "p", "br", "hr", "em", "strong", "b", "i", "u", "s", "del", "ins", "mark", "small", "sub", "sup",
    "kbd", "abbr", "cite", "q", "wbr", "ruby", "rt", "rp", "blockquote", "pre", "code", "span", "div",
    "aside", "section", "details", "summary", "figure", "figcaption", "ul", "ol", "li", "dl", "dt", "dd",
    "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th", "colgroup", "col",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "iframe", "input",
}  # fmt: skip

# No MathML here: formulas are cleaned on their own (``mathml``) and put in after this sanitizer ran, so
# an author's raw ``<math>`` cannot carry HTML inside it either.
ALLOWED_TAGS = frozenset(_TEXT_TAGS)

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
    # allow/sandbox/referrerpolicy: never the author's; ``_fix_iframes`` sets them per embed host.
    "iframe": {"src", "allowfullscreen", "loading", "width", "height", "title"},
    "br": {"style"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}
# tel: and ftp: as Zenn keeps them (sanitize-html's defaults); none of them runs script.
URL_SCHEMES = frozenset({"http", "https", "mailto", "tel", "ftp", "data"})
_DATA_IMAGE = re.compile(r"data:image/(?:png|gif|jpeg|webp)[;,]", re.IGNORECASE)
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_TEXT_ALIGN = re.compile(r"\s*text-align\s*:\s*(left|right|center|start|end|justify)\s*;?\s*", re.IGNORECASE)
_HIDDEN = re.compile(r"\s*display\s*:\s*none\s*;?\s*", re.IGNORECASE)
# The sanitizer's output, token by token: a tag (quoted values, no '"' inside) or text. nh3 escapes '<'
# in text and in values; reading whole tokens from the start keeps that true even if it did not.
_TAG = r'<(?:[^>"]|"[^"]*")*>'
_IFRAME_OPEN = re.compile(r"<iframe(?=[\s>/])")
# The same tokens, but every run of tokens that are not an iframe's start tag is one match (group 1),
# found in C: only iframes (and a '<' that starts no tag) reach Python. Possessive (``++``), so the run
# keeps no backtracking state per token and a page of a million tags costs no memory.
_RUN_OR_TAG = re.compile(rf"((?:[^<]+|(?!<iframe[\s>/]){_TAG})++)|{_TAG}|<")
_SRC = re.compile(r'\ssrc="([^"]*)"')
# Bounds for an iframe's width/height attributes: pixels up to these, or a percentage up to 100.
MAX_IFRAME_WIDTH = 1920
MAX_IFRAME_HEIGHT = 1080
_SIZE = re.compile(r"(\d{1,5})(%?)")


def sanitize(html: str) -> str:
    """``html`` with everything outside the allowlists removed (see the module docstring)."""
    return _fix_iframes(_checkbox_order(_cleaner().clean(html)))


# nh3 appends the checkbox's forced attributes an author's <input> lacks in the order of a Rust hash map,
# which is seeded per process: the same article came out as either order, so two processes (the render
# processes, a rebuild) stored different bytes. One order for all: the one a task list's box has.
_APPENDED_IN_HASH_ORDER = ' disabled="" type="checkbox">'
_CHECKBOX_TAIL = ' type="checkbox" disabled="">'


def _checkbox_order(html: str) -> str:
    if _APPENDED_IN_HASH_ORDER not in html:
        return html
    return html.replace(_APPENDED_IN_HASH_ORDER, _CHECKBOX_TAIL)


def url_as_browsers_read(value: str) -> str:
    """``value`` as the WHATWG URL parser reads it: leading and trailing C0 controls and spaces
    stripped, ASCII tab and newline removed anywhere (so ``"\x01data:"`` is a ``data:`` URL)."""
    return _TAB_NEWLINE.sub("", value.strip(_C0_OR_SPACE))


def repository_images(html: str) -> list[str]:
    """Image sources in sanitized ``html`` that point into the repository (left as written)."""
    return re.findall(r'<img [^>]*?src="(/?images/[^"]*)"', html)


@functools.cache
def _cleaner() -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style", "template", "noscript", "textarea", "title", "xmp"},
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_keep_attribute,
        strip_comments=True,
        link_rel="nofollow noopener noreferrer",
        url_schemes=set(URL_SCHEMES),
        # A disabled checkbox: the task lists' boxes show state, they are not a form.
        tag_attribute_values={"input": {"type": {"checkbox"}}},
        set_tag_attribute_values={"input": {"disabled": "", "type": "checkbox"}},
        filter_style_properties={"text-align", "display"},
    )


def _keep_attribute(element: str, attribute: str, value: str) -> str | None:
    if attribute == "id":
        return sanitized_id(value)
    if attribute == "style":
        return _style(element, value)
    if element == "iframe" and attribute in ("width", "height"):
        return _iframe_size(attribute, value)
    if attribute in ("href", "src"):
        value = url_as_browsers_read(value)
        if value[:5].lower() == "data:":
            ok = element == "img" and attribute == "src" and _DATA_IMAGE.match(value)
            return value if ok else None
        if element == "iframe":
            return value if is_allowed_iframe_src(value) else None
    return value


def _style(element: str, value: str) -> str | None:
    if element == "br":
        # Zenn's way of hiding the line break next to a link card.
        return "display: none" if _HIDDEN.fullmatch(value) else None
    match = _TEXT_ALIGN.fullmatch(value)
    return f"text-align:{match[1].lower()}" if match else None


def _iframe_size(attribute: str, value: str) -> str | None:
    match = _SIZE.fullmatch(value.strip())
    if not match:
        return None
    number, percent = int(match[1]), match[2]
    limit = 100 if percent else MAX_IFRAME_WIDTH if attribute == "width" else MAX_IFRAME_HEIGHT
    return f"{min(number, limit)}{percent}"


def _fix_iframes(html: str) -> str:
    """Every ``<iframe>`` gets the allow/sandbox/referrerpolicy of its host (``embeds.IFRAME_POLICIES``)."""
    if "<iframe" not in html:
        return html

    def fix(match: re.Match[str]) -> str:
        token = match[0]
        if match[1] is not None or not _IFRAME_OPEN.match(token):
            return token
        src = _SRC.search(token)
        policy = iframe_policy(html_unescape(src[1]) if src else None)
        fixed = f' sandbox="{policy.sandbox}" referrerpolicy="{policy.referrerpolicy}"'
        if policy.allow:
            fixed = f' allow="{policy.allow}"' + fixed
        return f"{token[:-1]}{fixed}>"

    return _RUN_OR_TAG.sub(fix, html)
