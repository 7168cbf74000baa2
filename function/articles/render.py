"""Markdown → HTML for articles, as Zenn renders it (zenn-markdown-html), then one sanitizer.

Zenn's dialect on markdown-it-py: CommonMark + tables + strikethrough, ``breaks`` (a newline is
``<br>``), bare URLs linked (linkify, no fuzzy links), link cards and ``@[service](…)`` embeds
(``embeds``), footnotes, task lists, image sizes, ``<br>``, dropped comments (``zenn_syntax``),
``lang:file``/``diff`` fences highlighted by Pygments (``highlight``), ``$…$``/``$$…$$`` as MathML
(``mathml``), ``:::message``/``:::details`` blocks, heading ids + table of contents (``toc``).

Whatever the input and the settings, the final HTML goes through ``sanitize.sanitize``: no output runs
script. ``allow_raw_html`` only decides whether the author's HTML is parsed (and then sanitized) or shown
as text. Limits that keep one render bounded are in ``limits``. With raw HTML off, highlighted code (our
own escaped markup, checked) skips the sanitizer and comes back as it would have written it
(``code_bodies``).
"""

from __future__ import annotations

import functools
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererProtocol
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.footnote.index import render_footnote_anchor_name, render_footnote_caption
from mdit_py_plugins.tasklists import tasklists_plugin

from function.articles.code_bodies import CodeBodies
from function.articles.highlight import Budget, render_fence
from function.articles.ids import footnote_key, own_id
from function.articles.images import ImageReferences, ImageResolver
from function.articles.limits import check_budget, cpu_budget, defuse, guard_rules
from function.articles.math_syntax import zenn_inline_math_plugin
from function.articles.mathml import render_math
from function.articles.sanitize import repository_images, sanitize
from function.articles.toc import TocEntry, assign_heading_ids, heading_ids
from function.articles.zenn_syntax import link_cards, zenn_syntax_plugin


@dataclass(frozen=True)
class Rendered:
    html: str
    toc: tuple[TocEntry, ...]
    # For the sync output, not for readers: e.g. repository images left relative.
    warnings: tuple[str, ...]


def render_article(
    text: str,
    *,
    allow_raw_html: bool = False,
    asset_base_url: str | None = None,
    resolve_image: ImageResolver | None = None,
) -> Rendered:
    """Render ``text``; raises ``RenderLimitError`` (function.errors) for input past a render bound.
    ``resolve_image``: gives each Markdown image's stored reference (the asset store's; it warns on its
    own), which the HTML keeps until it is served (``function.articles.images``). ``asset_base_url``
    (``ARTICLE_ASSET_BASE_URL``) is put before repository images when they are served, not here: set, no
    warning says they are left relative."""
    md = _renderer(allow_raw_html)
    formulas = Formulas()
    references = ImageReferences()
    # Author HTML could move a code block in the sanitizer's tree: its code is then sanitized in place.
    bodies = None if allow_raw_html else CodeBodies()
    env: EnvType = {"highlight_budget": Budget(), "formulas": formulas, "code_bodies": bodies}
    with cpu_budget():
        tokens = md.parse(defuse(text), env)
        toc = assign_heading_ids(tokens)
        if resolve_image is not None:
            references.resolve_sources(tokens, resolve_image)
        # markdown-it-footnote's docId, as Zenn passes it: footnote ids are fn-<key>-1, fnref-<key>-1.
        env["docId"] = footnote_key(text, heading_ids(tokens))
        link_cards(tokens)
        html = md.renderer.render(tokens, md.options, env)
    html = sanitize(html)  # linear, in Rust
    html = references.seal(html)  # only the renderer's own image references (images.ImageReferences)
    html = formulas.put_in(html)  # each formula cleaned on its own (mathml.render_math)
    if bodies is not None:
        html = bodies.put_in(html)  # our own highlighted code, as the sanitizer writes it (code_bodies)
    warnings = []
    if not asset_base_url and resolve_image is None:
        images = repository_images(html)
        if images:
            warnings.append(
                f"{len(images)} image(s) point into the repository (e.g. {images[0]}) and "
                "ARTICLE_ASSET_BASE_URL is not set: left relative, readers may not see them"
            )
    return Rendered(html=html, toc=tuple(toc), warnings=tuple(warnings))


def render_markdown(text: str, *, allow_raw_html: bool = False, asset_base_url: str | None = None) -> str:
    """Only the HTML of ``render_article``."""
    return render_article(text, allow_raw_html=allow_raw_html, asset_base_url=asset_base_url).html


def is_safe_url(url: str) -> bool:
    """The scheme check the renderer applies to link and image URLs (for front matter URLs)."""
    return bool(_renderer(False).validateLink(url))


@functools.cache
def _renderer(allow_raw_html: bool) -> MarkdownIt:
    # Built on first use, not at import; one instance per flag. A MarkdownIt instance keeps no per-render
    # state (that lives in env), so sharing it between threads of the worker is fine.
    return build_renderer(allow_raw_html)


def build_renderer(allow_raw_html: bool) -> MarkdownIt:
    """The article renderer: markdown-it-py with the plugins and render rules of Zenn's dialect."""
    md = MarkdownIt("commonmark", {"html": allow_raw_html, "linkify": True, "breaks": True})
    md.enable(["table", "strikethrough", "linkify"])
    # The inline linkify rule links "https://..." where it starts; the core one re-scans every text token
    # for fuzzy links, which Zenn turns off anyway (and it cost 40 % of the render time).
    md.core.ruler.disable("linkify")
    # Zenn: only URLs with a scheme (or www.) are linked, never "example.com" or e-mail addresses.
    assert md.linkify is not None  # linkify-it-py is a dependency
    md.linkify.set({"fuzzy_link": False, "fuzzy_email": False})
    zenn_syntax_plugin(md)
    footnote_plugin(md)
    tasklists_plugin(md, enabled=False)
    # Labels: Zenn's equation numbers, "$$a=b$$ (1)" (shown after the formula, never an id).
    dollarmath_plugin(md, allow_labels=True, allow_space=False, allow_digits=False, double_inline=True)
    zenn_inline_math_plugin(md)
    md.add_render_rule("math_inline", _render_math_inline)
    md.add_render_rule("math_inline_double", _render_math_display)
    md.add_render_rule("math_block", _render_math_display)
    md.add_render_rule("math_block_label", _render_math_display)
    # Only the lines Zenn opens as a block are blocks (its renderer's patterns): any other ``:::message…``
    # or ``:::details`` line stays the author's text, as Zenn shows it.
    container_plugin(md, "message", validate=_is_message, render=_render_message)
    container_plugin(md, "details", validate=_is_details, render=_render_details)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("footnote_block_open", _render_footnotes_open)
    md.add_render_rule("footnote_ref", _render_footnote_ref)
    md.add_render_rule("footnote_open", _render_footnote_open)
    guard_rules(md)
    return md


def _render_fence(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    check_budget()
    token = tokens[idx]
    return render_fence(token.content, token.info, env["highlight_budget"], env["code_bodies"])


# Any render's formula marker: the nonce is compared in Python (``Formulas``), so that no pattern is
# compiled per render (each compile costs a quarter of a millisecond).
_MARKER = re.compile("\ue000([0-9a-f]{16}):(\\d+)\ue001")
_WRAPPED_MARKER = re.compile(
    "|".join(
        f"(?<={before})\ue000([0-9a-f]{{16}}):(\\d+)\ue001(?={after})"
        for before, after in (
            ('<span class="math inline">', "</span>"),
            ('<div class="math inline">', "</div>"),
            ('<div class="math block">\n', '\n</div>|<span class="math-eqno">'),
        )
    )
)


class Formulas:
    """The MathML of one render's formulas, kept out of the page until it is sanitized.

    The page gets a marker per formula (private-use characters around a per-render secret, which an
    author cannot write); ``put_in`` swaps each marker for its MathML, already cleaned on its own with a
    MathML-only allowlist, after the page's sanitizer (which allows no MathML) ran.

    Only a marker that is the whole content of the renderer's own wrapper (``<span class="math
    inline">``, ``<div class="math …">``, as the sanitizer writes them) gets its formula. With raw HTML
    on, an author's unclosed attribute (``<iframe … title='``) can swallow the next paragraph, wrapper
    and marker included: there the sanitizer wrote the wrapper's quotes as ``&quot;``, so it is not
    found, and a ``<math display="…">`` put in would end the attribute in a browser and the tag after
    it, dropping the iframe's ``sandbox`` and ``allow``. Every other marker is removed.
    """

    def __init__(self) -> None:
        self._nonce = secrets.token_hex(8)
        self._markup: list[str] = []

    def add(self, latex: str, *, display: bool) -> str:
        self._markup.append(render_math(latex, {"display_mode": display}))
        return f"\ue000{self._nonce}:{len(self._markup) - 1}\ue001"

    def put_in(self, html: str) -> str:
        if not self._markup:
            return html
        html = _WRAPPED_MARKER.sub(self._formula_of, html)
        return _MARKER.sub(lambda m: "" if m[1] == self._nonce else m[0], html)

    def _formula_of(self, wrapped: re.Match[str]) -> str:
        # Each wrapper's alternative has its own (nonce, number) pair of groups: the matched one's number
        # is the last group that matched.
        last = wrapped.lastindex or 0
        nonce, number = wrapped[last - 1], wrapped[last]
        return self._markup[int(number)] if nonce == self._nonce else wrapped[0]


def _render_math_inline(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    marker = env["formulas"].add(tokens[idx].content.strip(), display=False)
    return f'<span class="math inline">{marker}</span>'


def _render_math_display(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    marker = env["formulas"].add(tokens[idx].content.strip(), display=True)
    token = tokens[idx]
    if token.type == "math_inline_double":
        return f'<div class="math inline">{marker}</div>'
    if token.type == "math_block_label":
        number = f'<span class="math-eqno">({escapeHtml(token.info)})</span>'
        return f'<div class="math block">\n{marker}{number}\n</div>\n'
    return f'<div class="math block">\n{marker}\n</div>\n'


def _render_footnote_ref(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # markdown-it-footnote's, with the renderer's mark on the id (the sanitizer fences authors' ids off).
    ident = render_footnote_anchor_name(self, tokens, idx, options, env)
    caption = render_footnote_caption(self, tokens, idx, options, env)
    sub_id = tokens[idx].meta.get("subId", -1)
    refid = f"{ident}:{sub_id}" if sub_id > 0 else ident
    anchor = f'<a href="#fn{ident}" id="{own_id("fnref" + refid)}">{caption}</a>'
    return f'<sup class="footnote-ref">{anchor}</sup>'


def _render_footnote_open(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    ident = render_footnote_anchor_name(self, tokens, idx, options, env)
    return f'<li id="{own_id("fn" + ident)}" class="footnote-item">'


def _render_footnotes_open(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    return '<section class="footnotes">\n<ol class="footnotes-list">\n'


# Zenn's patterns for a container's opening line, after its colons (zenn-markdown-html's md-container).
_MESSAGE_INFO = re.compile(r"message\s*(alert)?")
_DETAILS_INFO = re.compile(r"details\s+(.*)")


def _is_message(params: str, _markup: str) -> bool:
    return _MESSAGE_INFO.fullmatch(params.strip()) is not None


def _is_details(params: str, _markup: str) -> bool:
    return _DETAILS_INFO.fullmatch(params.strip()) is not None


def _render_message(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</aside>\n"
    # info is "message", "message alert" (or Zenn's "messagealert"): the only lines opened as one.
    found = _MESSAGE_INFO.fullmatch(token.info.strip())
    kind = "alert" if found is not None and found.group(1) else "message"
    return f'<aside class="msg {kind}">\n'


def _render_details(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</details>\n"
    # Opened only with a summary (Zenn's pattern wants one): "details" alone stays text.
    found = _DETAILS_INFO.fullmatch(token.info.strip())
    title = found.group(1) if found is not None else ""
    return f"<details><summary>{escapeHtml(title)}</summary>\n"
