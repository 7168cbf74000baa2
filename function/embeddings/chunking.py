"""The local chunker, for the providers that only embed (Bedrock, OpenAI-compatible): an article cut
into chunks along its headings, each at most ``max_tokens`` long, with ``overlap_tokens`` repeated
between the pieces of one long section.

How it cuts, and why:

- A heading (``#`` to ``######`` at the start of a line, outside a fenced code block) starts a section,
  so a chunk never mixes two sections, and each chunk knows the heading it falls under.
- A section longer than ``max_tokens`` is cut into windows of that many tokens, each ending at the last
  blank line inside it when that keeps at least half of the window (paragraphs stay whole where they can);
  the next window starts ``overlap_tokens`` before the previous one ended.
- Tokens are counted without a model's tokenizer, as an estimate on the safe side for both scripts: a run
  of Latin letters or digits is one token, every other visible character (a kanji, a kana, a mark) is one.
  Japanese text is about one token a character in the models used here, English about 1.3 a word, and
  the bound is far below their input limits.
- What is embedded is the chunk with the article's title and the heading before it (and, for the first
  chunk, the description), so a chunk of a section named "Setup" is still about the article's subject.

``CHUNKER_VERSION`` is stored with the vectors: changing how this cuts means raising it, and every
article's vectors are then computed again at the next push.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from function.embeddings.port import (
    MAX_TOKENS,
    OVERLAP_TOKENS,
    ArticleText,
    Chunking,
    TextChunk,
)

CHUNKER_VERSION = "local-1"

_TOKEN = re.compile(r"[A-Za-z0-9_]+|\S")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")


@dataclass(frozen=True)
class _Section:
    heading: str
    text: str


def count_tokens(text: str) -> int:
    """The estimate of ``text``'s tokens used for every bound here."""
    return sum(1 for _ in _TOKEN.finditer(text))


def chunk_article(
    article: ArticleText, *, max_tokens: int = MAX_TOKENS, overlap_tokens: int = OVERLAP_TOKENS
) -> Chunking:
    """``article`` cut into chunks (see the module's docstring); an article without a body is one chunk
    of its title and description."""
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError("overlap_tokens must be at least 0 and less than max_tokens")
    pieces: list[tuple[str, str]] = []
    for section in _sections(article.content):
        pieces += [(section.heading, text) for text in _windows(section.text, max_tokens, overlap_tokens)]
    if not pieces:
        pieces = [("", "")]
    chunks = []
    for index, (heading, text) in enumerate(pieces):
        lead = [article.title]
        if index == 0 and article.description:
            lead.append(article.description)
        if heading:
            lead.append(heading)
        embedding_text = "\n".join([*lead, text]).strip()
        chunks.append(TextChunk(index, heading, text, embedding_text, count_tokens(embedding_text)))
    return Chunking(chunking_version(max_tokens, overlap_tokens), tuple(chunks))


def chunking_version(max_tokens: int = MAX_TOKENS, overlap_tokens: int = OVERLAP_TOKENS) -> str:
    """What is stored as the chunking of this chunker's chunks of that size."""
    return f"{CHUNKER_VERSION}:{max_tokens}:{overlap_tokens}"


LOCAL_CHUNKING = chunking_version()


def _sections(markdown: str) -> list[_Section]:
    """The body cut at its headings (those inside fenced code are text); empty sections dropped."""
    sections: list[_Section] = []
    heading, lines = "", list[str]()
    fence: str | None = None
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        elif found := _HEADING.match(line):
            sections.append(_Section(heading, "\n".join(lines).strip()))
            heading, lines = found.group(2).strip(), []
            continue
        lines.append(line)
    sections.append(_Section(heading, "\n".join(lines).strip()))
    return [s for s in sections if s.text or s.heading]


def _windows(text: str, max_tokens: int, overlap_tokens: int) -> list[str]:
    """``text`` as windows of at most ``max_tokens`` tokens, ``overlap_tokens`` shared between two."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if len(spans) <= max_tokens:
        return [text] if text else []
    windows = []
    start = 0
    while start < len(spans):
        end = min(start + max_tokens, len(spans))
        if end < len(spans):
            # End at the last paragraph break of the window, if that keeps at least half of it.
            piece = text[spans[start][0] : spans[end - 1][1]]
            cut = piece.rfind("\n\n")
            if cut > 0:
                kept = sum(1 for s in spans[start:end] if s[1] <= spans[start][0] + cut)
                if kept >= max_tokens // 2:
                    end = start + kept
        windows.append(text[spans[start][0] : spans[end - 1][1]].strip())
        if end >= len(spans):
            break
        start = max(end - overlap_tokens, start + 1)
    return windows
