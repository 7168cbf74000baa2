"""Heading ids (as Zenn makes them, see ``ids``) and the table of contents built from them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it.token import Token

from function.articles.ids import HEADING_ID_LEVELS, Slugger, own_id, slugify

# Levels listed in the table of contents (Zenn lists h1-h3).
TOC_LEVELS = (1, 2, 3)


@dataclass(frozen=True)
class TocEntry:
    level: int
    id: str
    text: str

    def as_json(self) -> dict[str, object]:
        return {"level": self.level, "id": self.id, "text": self.text}


def assign_heading_ids(tokens: Sequence[Token]) -> list[TocEntry]:
    """Give each h1-h4 Zenn's id (duplicates numbered ``-1``, ``-2``…); return the top-level h1-h3.

    The token's id carries the renderer's mark (``ids.own_id``) that the sanitizer takes off; the toc
    holds the plain id.
    """
    slugger = Slugger()
    toc: list[TocEntry] = []
    for idx, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        level = int(token.tag[1])
        if level not in HEADING_ID_LEVELS:
            continue
        inline = tokens[idx + 1]
        slug = slugger.unique(slugify(slug_source(inline)))
        token.attrSet("id", own_id(slug))
        # level 0: not inside a blockquote, list or ::: block, like Zenn's "body > h2".
        if level in TOC_LEVELS and token.level == 0:
            toc.append(TocEntry(level=level, id=slug, text=" ".join(heading_text(inline).split())))
    return toc


def heading_ids(tokens: Sequence[Token]) -> list[str]:
    """The plain ids ``assign_heading_ids`` gave (to keep footnote ids clear of them)."""
    ids = []
    for token in tokens:
        value = token.attrGet("id") if token.type == "heading_open" else None
        if isinstance(value, str):
            ids.append(value.removeprefix(own_id("")))
    return ids


def slug_source(inline: Token) -> str:
    """markdown-it-anchor's getTokensText: the text and inline code of the heading, nothing else."""
    return "".join(c.content for c in inline.children or () if c.type in ("text", "code_inline"))


def heading_text(inline: Token) -> str:
    parts = []
    for child in inline.children or ():
        if child.type in ("text", "code_inline", "math_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)
