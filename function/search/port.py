"""The seam semantic search plugs into: what the search route asks of it, whatever the provider."""

from __future__ import annotations

from typing import Protocol


class SemanticSearch(Protocol):
    """Nearest articles of a user to a query by meaning."""

    def search(self, user_id: int, query: str, limit: int) -> list[tuple[int, float]]:
        """Up to ``limit`` (article id, cosine distance) of the user's indexed articles, nearest
        first, each article once. Raises ``function.errors.EmbeddingFailed`` when the provider fails."""
        ...
