"""markdown-it rules for Zenn's syntax that no plugin of mdit-py-plugins covers.

* ``<br>`` (``<br/>``, ``<br />``) is a line break even with raw HTML off, tables included.
* ``<!-- … -->`` is an author's note: dropped, as a block and inline (an unclosed one stays text).
* ``![alt](url =WxH)`` (also ``=W x``/``=xH``, digits or ``%``) sets width/height.
* ``@[service](arg)`` alone on a line is an embed (``embeds.embed_html``).
* A bare URL alone on its line of a top-level paragraph (not in a list, quote or ``:::message``) is a
  link card (``embeds.card_html``); the line breaks next to it are hidden (``<br style="display: none">``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.common.utils import isStrSpace, normalizeReference
from markdown_it.renderer import RendererHTML, RendererProtocol
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from function.articles.embeds import EMBED_SERVICES, card_html, embed_html
from function.articles.limits import check_budget

_BR = re.compile(r"<br ?/?>")
_SIZE = re.compile(r"=(\d{1,5}%?)?x(\d{1,5}%?)?")
_EMBED_LINE = re.compile(r"@\[([\w-]{1,32})\]\((.+)\)[ \t]*")
_BREAKS = ("softbreak", "hardbreak", "zenn_br")


def zenn_syntax_plugin(md: MarkdownIt) -> None:
    md.inline.ruler.before("autolink", "zenn_br", _br)
    md.inline.ruler.before("autolink", "zenn_comment", _inline_comment)
    md.inline.ruler.at("image", _image_with_size)
    # Not a paragraph's end: a comment line under text belongs to that paragraph, as on Zenn (where it
    # leaves the line break before it), and the inline rule drops it there.
    md.block.ruler.before("html_block", "zenn_comment", _block_comment)
    md.block.ruler.before(
        "fence", "zenn_embed", _embed, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )
    md.add_render_rule("zenn_br", lambda *_: "<br>\n")
    md.add_render_rule("image", _render_image)
    md.add_render_rule("zenn_embed", _render_embed)


def link_cards(tokens: Sequence[Token]) -> None:
    """Turn a linkified URL alone on its line of a top-level paragraph into a card (in place)."""
    containers: list[str] = []
    for i, token in enumerate(tokens):
        if token.type in ("container_details_open", "container_message_open"):
            containers.append(token.type)
        elif token.type in ("container_details_close", "container_message_close"):
            if containers:
                containers.pop()
        elif token.type == "inline" and token.children and i > 0:
            parent = tokens[i - 1]
            if parent.type != "paragraph_open" or parent.level != len(containers):
                continue
            if containers and containers[-1] == "container_message_open":
                continue
            token.children = _cards(token.children)


def _cards(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(children):
        child = children[i]
        at_start = i == 0 or children[i - 1].type in _BREAKS
        at_end = i + 3 >= len(children) or children[i + 3].type in _BREAKS
        if (
            child.type == "link_open"
            and child.markup == "linkify"
            and at_start
            and at_end
            and i + 2 < len(children)
            and children[i + 2].type == "link_close"
        ):
            href = str(child.attrGet("href") or "")
            # The line breaks around a card would add space under and over it: Zenn hides them.
            if out and out[-1].type in _BREAKS:
                out[-1] = _hidden_break()
            out.append(Token("html_inline", "", 0, content=card_html(href, children[i + 1].content)))
            i += 3
            if i < len(children) and children[i].type in _BREAKS:
                out.append(_hidden_break())
                i += 1
            continue
        out.append(child)
        i += 1
    return out


def _hidden_break() -> Token:
    return Token("html_inline", "br", 0, content='<br style="display: none">\n')


# --- inline -------------------------------------------------------------------------------------------


def _br(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "<":
        return False
    match = _BR.match(state.src, state.pos, state.posMax)
    if not match:
        return False
    if not silent:
        state.push("zenn_br", "br", 0)
    state.pos = match.end()
    return True


def _inline_comment(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("<!--", state.pos):
        return False
    end = _find_comment_end(state.env, state.src, state.pos + 4, state.posMax)
    if end < 0:
        return False
    state.pos = end + 3
    return True


def _find_comment_end(env: EnvType, src: str, start: int, stop: int) -> int:
    # A run of unclosed "<!--" would make every search scan to the end (quadratic): once a search from
    # some position found nothing, no later start in the same text can find anything.
    failed = env.get("_comment_search_failed")
    if failed is not None and failed[0] is src and failed[1] <= start and failed[2] >= stop:
        return -1
    end = src.find("-->", start, stop)
    if end < 0:
        env["_comment_search_failed"] = (src, start, stop)
    return end


def _image_with_size(state: StateInline, silent: bool) -> bool:
    """markdown-it's image rule with Zenn's optional `` =WxH`` after the destination."""
    src, old_pos, maximum = state.src, state.pos, state.posMax
    if src[state.pos] != "!" or state.pos + 1 >= maximum or src[state.pos + 1] != "[":
        return False
    label_start = state.pos + 2
    label_end = state.md.helpers.parseLinkLabel(state, state.pos + 1, False)
    if label_end < 0:
        return False
    pos = label_end + 1
    href, title, width, height = "", "", "", ""
    if pos < maximum and src[pos] == "(":
        pos = _skip_space(src, pos + 1, maximum)
        if pos >= maximum:
            return False
        res = state.md.helpers.parseLinkDestination(src, pos, maximum)
        if res.ok:
            href = state.md.normalizeLink(res.str)
            if state.md.validateLink(href):
                pos = res.pos
            else:
                href = ""
        start = pos
        pos = _skip_space(src, pos, maximum)
        size = _SIZE.match(src, pos, maximum) if pos > start else None
        if size and (size[1] or size[2]):
            width, height = size[1] or "", size[2] or ""
            start = size.end()
            pos = _skip_space(src, start, maximum)
        res = state.md.helpers.parseLinkTitle(src, pos, maximum, None)
        if pos < maximum and start != pos and res.ok:
            title = res.str
            pos = _skip_space(src, res.pos, maximum)
        if pos >= maximum or src[pos] != ")":
            state.pos = old_pos
            return False
        pos += 1
    else:
        references = state.env.get("references")
        if not references:
            return False
        label = None
        if pos < maximum and src[pos] == "[":
            start = pos + 1
            pos = state.md.helpers.parseLinkLabel(state, pos)
            if pos >= 0:
                label = src[start:pos]
                pos += 1
            else:
                pos = label_end + 1
        else:
            pos = label_end + 1
        ref = references.get(normalizeReference(label or src[label_start:label_end]))
        if not ref:
            state.pos = old_pos
            return False
        href, title = ref["href"], ref["title"]

    if not silent:
        content = src[label_start:label_end]
        tokens: list[Token] = []
        # Tokenized only, as Zenn's image rule does (no emphasis pairing): the alt text is Zenn's.
        state.md.inline.tokenize(StateInline(content, state.md, state.env, tokens))
        # Backslash escapes stay out of the alt text there (later core rules would join them to text).
        tokens = [t for t in tokens if t.type != "text_special"]
        token = state.push("image", "img", 0)
        token.attrs = {"src": href, "alt": ""}
        token.children = tokens or None
        token.content = content
        if title:
            token.attrSet("title", title)
        if width:
            token.attrSet("width", width)
        if height:
            token.attrSet("height", height)
    state.pos = pos
    state.posMax = maximum
    return True


def _render_image(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    token.attrSet("alt", alt_text(token.children or ()))
    assert isinstance(self, RendererHTML)
    return self.renderToken(tokens, idx, options, env)


def alt_text(tokens: Sequence[Token]) -> str:
    """markdown-it's (JavaScript) renderInlineAsText, which Zenn's alt texts come from: text, images'
    text, HTML and line breaks; inline code and backslash escapes are left out."""
    parts = []
    for token in tokens:
        if token.type in ("text", "html_inline", "html_block"):
            parts.append(token.content)
        elif token.type == "image":
            parts.append(alt_text(token.children or ()))
        elif token.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def _skip_space(src: str, pos: int, maximum: int) -> int:
    while pos < maximum and (isStrSpace(src[pos]) or src[pos] == "\n"):
        pos += 1
    return pos


# --- block --------------------------------------------------------------------------------------------


def _block_comment(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[start_line] + state.tShift[start_line]
    if not state.src.startswith("<!--", pos):
        return False
    end = _find_comment_end(state.env, state.src, pos + 4, len(state.src))
    if end < 0:
        return False
    # The comment must end its line; "<!-- x --> text" is left to the paragraph (the inline rule).
    line = start_line
    while line < end_line and state.eMarks[line] < end:
        line += 1
    if line >= end_line or state.src[end + 3 : state.eMarks[line]].strip():
        return False
    if silent:
        return True
    state.line = line + 1
    return True


def _embed(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[start_line] + state.tShift[start_line]
    if not state.src.startswith("@[", pos):
        return False
    match = _EMBED_LINE.fullmatch(state.src, pos, state.eMarks[start_line])
    if not match or match[1] not in EMBED_SERVICES:
        return False
    if silent:
        return True
    token = state.push("zenn_embed", "", 0)
    token.meta = {"service": match[1], "arg": match[2]}
    token.block = True
    token.map = [start_line, start_line + 1]
    state.line = start_line + 1
    return True


def _render_embed(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    check_budget()
    meta = tokens[idx].meta
    return (embed_html(meta["service"], meta["arg"]) or "") + "\n"
