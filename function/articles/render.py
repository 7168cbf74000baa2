"""Markdown → HTML for articles: CommonMark + tables + strikethrough + Zenn-style ``:::`` blocks.

The HTML is safe to insert into a page as is: raw HTML in the Markdown is escaped (unless the caller
explicitly allows it) and link/image URLs with script-capable schemes are not turned into links.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.container import container_plugin


def render_markdown(text: str, *, allow_raw_html: bool = False) -> str:
    """Render ``text`` to HTML.

    Promises: ``<script>`` and any other raw HTML come out escaped unless ``allow_raw_html``;
    ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` URLs (except ``data:image/{gif,png,jpeg,webp}``)
    never become ``href``/``src`` attributes (markdown-it's ``validateLink``); bare URLs are not linkified.
    ``:::message`` → ``<aside class="msg message">``, ``:::message alert`` → ``<aside class="msg alert">``,
    ``:::details Title`` → ``<details><summary>Title</summary>…</details>``; containers nest when the outer
    one uses more colons (``::::details`` around ``:::message``), as Zenn documents.
    """
    return _renderer(allow_raw_html).render(text)


def is_safe_url(url: str) -> bool:
    """The same scheme check the renderer applies to link and image URLs (for front matter URLs)."""
    return bool(_renderer(False).validateLink(url))


@functools.cache
def _renderer(allow_raw_html: bool) -> MarkdownIt:
    # Built on first use, not at import; one instance per flag. A MarkdownIt instance keeps no per-render
    # state, so sharing it between threads of the worker is fine.
    md = MarkdownIt("commonmark", {"html": allow_raw_html, "linkify": False})
    md.enable(["table", "strikethrough"])
    container_plugin(md, "message", render=_render_message)
    container_plugin(md, "details", render=_render_details)
    return md


def _render_message(
    self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</aside>\n"
    # info is "message" or "message alert"; anything else after "message" is treated as a plain message.
    words = token.info.split()
    kind = "alert" if words[1:2] == ["alert"] else "message"
    return f'<aside class="msg {kind}">\n'


def _render_details(
    self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</details>\n"
    title = token.info.strip()[len("details") :].strip()
    if not title:
        # No <summary>: the browser shows its own "Details" label.
        return "<details>\n"
    return f"<details><summary>{escapeHtml(title)}</summary>\n"
