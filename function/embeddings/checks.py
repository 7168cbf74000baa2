"""What every adapter checks of a provider's answer before a vector is stored or searched with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from function.embeddings.port import TextChunk, Vector
from function.errors import EmbeddingFailed


class DimensionPin:
    """The dimension of one provider's vectors: the first answer sets it, and any later answer of another
    dimension is refused (vectors of two dimensions cannot be compared)."""

    def __init__(self, expected: int | None = None) -> None:
        self.expected = expected

    def check(self, vector: Vector, provider: str) -> Vector:
        if self.expected is None:
            self.expected = len(vector)
        elif len(vector) != self.expected:
            raise EmbeddingFailed(
                f"{provider} answered a vector of {len(vector)} dimensions, not {self.expected}"
            )
        return vector


def vector_of(value: Any, provider: str, *, declared_dim: Any = None) -> Vector:
    """``value`` (a JSON list of numbers) as a float32 vector: non-empty, every value finite, and as long
    as ``declared_dim`` when the answer declares one. Raises EmbeddingFailed saying what was wrong."""
    if not isinstance(value, list) or not value:
        raise EmbeddingFailed(f"{provider} answered no vector")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise EmbeddingFailed(f"{provider} answered a vector that holds something other than numbers")
    with np.errstate(over="ignore"):  # a value past float32's range becomes inf, refused just below
        vector = np.asarray(value, dtype=np.float64).astype(np.float32)
    if not np.all(np.isfinite(vector)):
        raise EmbeddingFailed(f"{provider} answered a vector with values that are not finite numbers")
    if declared_dim is not None and (not isinstance(declared_dim, int) or declared_dim != len(vector)):
        raise EmbeddingFailed(
            f"{provider} answered a vector of {len(vector)} dimensions but declared {declared_dim!r}"
        )
    if not np.any(vector):
        # A zero vector has no direction: its cosine distance to anything is undefined.
        raise EmbeddingFailed(f"{provider} answered a zero vector")
    return vector


def sequential(chunks: Sequence[TextChunk], provider: str) -> tuple[TextChunk, ...]:
    """``chunks`` when their indexes are 0, 1, 2… in order; else EmbeddingFailed."""
    for place, chunk in enumerate(chunks):
        if chunk.index != place:
            raise EmbeddingFailed(
                f"{provider} answered chunks out of order: index {chunk.index} where {place} was due"
            )
    return tuple(chunks)
