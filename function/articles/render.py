"""Markdown → HTML for articles, as Zenn renders it (zenn-markdown-html), then one sanitizer.

Zenn's dialect on markdown-it-py: CommonMark + tables + strikethrough, ``breaks`` (a newline is
``<br>``), bare URLs linked (linkify, no fuzzy links), link cards and ``@[service](…)`` embeds
(``embeds``), footnotes, task lists, image sizes, ``<br>``, dropped comments (``zenn_syntax``),
``lang:file``/``diff`` fences highlighted by Pygments (``highlight``), ``$…$``/``$$…$$`` as MathML
(``mathml``), ``:::message``/``:::details`` blocks, heading ids + table of contents (``toc``).

Whatever the input and the settings, the final HTML goes through ``sanitize.sanitize``: no output runs
script. ``allow_raw_html`` only decides whether the author's HTML is parsed (and then sanitized) or shown
as text. Limits that keep one render bounded are in ``limits``.
"""

from __future__ import annotations

import functools
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
from mdit_py_plugins.tasklists import tasklists_plugin

from function.articles.highlight import Budget, render_fence
from function.articles.images import ImageResolver, resolve_image_sources
from function.articles.limits import check_budget, cpu_budget, defuse, guard_rules
from function.articles.mathml import render_math
from function.articles.sanitize import repository_images, sanitize
from function.articles.toc import TocEntry, assign_heading_ids
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
    ``resolve_image``: gives each Markdown image's URL (the asset store's; it warns on its own)."""
    md = _renderer(allow_raw_html)
    env: EnvType = {"highlight_budget": Budget()}
    with cpu_budget():
        tokens = md.parse(defuse(text), env)
        toc = assign_heading_ids(tokens)
        if resolve_image is not None:
            resolve_image_sources(tokens, resolve_image)
        link_cards(tokens)
        html = md.renderer.render(tokens, md.options, env)
    html = sanitize(html, asset_base_url=asset_base_url)  # linear, in Rust
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
    dollarmath_plugin(
        md,
        allow_labels=False,
        allow_space=False,
        allow_digits=False,
        double_inline=True,
        renderer=render_math,
    )
    container_plugin(md, "message", render=_render_message)
    container_plugin(md, "details", render=_render_details)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("footnote_block_open", _render_footnotes_open)
    guard_rules(md)
    return md


def _render_fence(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    check_budget()
    token = tokens[idx]
    return render_fence(token.content, token.info, env["highlight_budget"])


def _render_footnotes_open(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    return '<section class="footnotes">\n<ol class="footnotes-list">\n'


def _render_message(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</aside>\n"
    # info is "message" or "message alert"; anything else after "message" is treated as a plain message.
    words = token.info.split()
    kind = "alert" if words[1:2] == ["alert"] else "message"
    return f'<aside class="msg {kind}">\n'


def _render_details(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</details>\n"
    title = token.info.strip()[len("details") :].strip()
    if not title:
        # No <summary>: the browser shows its own "Details" label.
        return "<details>\n"
    return f"<details><summary>{escapeHtml(title)}</summary>\n"
