"""What ``blog-api search status`` says of semantic search: whether it is on, with which model, and how
many served articles still lack current vectors (they are embedded at the next push of their blog)."""

from __future__ import annotations

from dataclasses import dataclass, field

from function.embeddings.port import EmbeddingProvider
from function.store.embeddings import EmbeddingQueries


@dataclass(frozen=True)
class VectorStatus:
    """``provider`` and ``model`` (None: semantic search is off), and the served articles without
    current vectors by user name (users with none missing are left out)."""

    provider: str | None
    model: str | None
    missing: dict[str, int] = field(default_factory=dict)

    @property
    def missing_total(self) -> int:
        return sum(self.missing.values())


def vector_status(
    provider_name: str | None,
    provider: EmbeddingProvider | None,
    queries: EmbeddingQueries,
    *,
    user_id: int | None = None,
) -> VectorStatus:
    """Count the missing vectors (every user, or ``user_id``'s) with one SELECT; no call to the
    provider. A provider that chunks itself is counted by model and text only until it has chunked."""
    if provider is None:
        return VectorStatus(None, None)
    missing = queries.missing_count(provider.model, provider.chunking, user_id=user_id)
    return VectorStatus(provider_name, provider.model, missing)
