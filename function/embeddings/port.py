"""The embedding port: what semantic search asks of any provider, and the shapes it answers with.

An adapter turns an article into chunks (the service chunks it itself; the others use ``chunking``),
embeds those chunks' texts as documents, and embeds a reader's query. Every failure is one exception,
``function.errors.EmbeddingFailed``, whose message never holds a key or the text sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

# One embedding: float32, as stored (4 bytes a dimension).
Vector = npt.NDArray[np.float32]

# Every adapter asks for chunks of this size: the bound is well below each model's input limit (Titan V2:
# 8,192 tokens; OpenAI's: 8,191), and a chunk of about a screen of text keeps a match specific to the
# part of the article it came from. The overlap keeps a sentence cut at a chunk's end findable.
MAX_TOKENS = 512
OVERLAP_TOKENS = 64


@dataclass(frozen=True)
class ArticleText:
    """What is embedded of an article: its title, description and Markdown body."""

    title: str
    description: str
    content: str


@dataclass(frozen=True)
class TextChunk:
    """One chunk of an article: its place (``index``, from 0 without gaps), the heading it falls under,
    its text as readers see it (``content``), what is embedded (``embedding_text``: the text with the
    title and heading before it) and its size in tokens."""

    index: int
    heading: str
    content: str
    embedding_text: str
    token_count: int


@dataclass(frozen=True)
class Chunking:
    """An article's chunks and the chunker's ``version``: stored with the vectors, so a new chunker (or
    another chunk size) makes every article's vectors be computed again."""

    version: str
    chunks: tuple[TextChunk, ...]


class EmbeddingProvider(Protocol):
    """An embedding provider: the port semantic search and the sync use."""

    @property
    def model(self) -> str:
        """What makes the vectors (provider and model): stored with them, so another model's vectors are
        never compared with this one's, and a change of model computes them again."""
        ...

    @property
    def chunking(self) -> str | None:
        """The version the next ``chunk`` will answer with, when known without asking the provider (the
        local chunker's); None for a provider that chunks itself until it has answered once."""
        ...

    def chunk(self, article: ArticleText) -> Chunking:
        """``article`` cut into chunks. Raises EmbeddingFailed."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order, all of one dimension. Raises EmbeddingFailed."""
        ...

    def embed_query(self, text: str) -> Vector:
        """The vector of a reader's query. Raises EmbeddingFailed."""
        ...
