"""Heading ids (GitHub/Zenn style) and the table of contents built from them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it.token import Token

# Levels listed in the table of contents (Zenn lists h1-h3); every heading gets an id.
TOC_LEVELS = (1, 2, 3)
_DROP = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class TocEntry:
    level: int
    id: str
    text: str

    def as_json(self) -> dict[str, object]:
        return {"level": self.level, "id": self.id, "text": self.text}


def slugify(text: str) -> str:
    """GitHub's rule: lower case, punctuation dropped, spaces to ``-``; letters of any script are kept."""
    slug = _DROP.sub("", text.strip().lower()).replace(" ", "-")
    return slug or "section"


def assign_heading_ids(tokens: Sequence[Token]) -> list[TocEntry]:
    """Give each heading a unique id (duplicates get ``-1``, ``-2``…); return the top-level h1-h3."""
    seen: set[str] = set()
    toc: list[TocEntry] = []
    for idx, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        text = heading_text(tokens[idx + 1])
        base = slugify(text)
        slug, n = base, 0
        while slug in seen:
            n += 1
            slug = f"{base}-{n}"
        seen.add(slug)
        token.attrSet("id", slug)
        level = int(token.tag[1])
        # level 0: not inside a blockquote, list or ::: block, like Zenn's "body > h2".
        if level in TOC_LEVELS and token.level == 0:
            toc.append(TocEntry(level=level, id=slug, text=" ".join(text.split())))
    return toc


def heading_text(inline: Token) -> str:
    parts = []
    for child in inline.children or ():
        if child.type in ("text", "code_inline", "math_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)
