"""The semantic half of search, as the search route sees it: a reader's query to the user's closest
articles. ``function.search.embeddings.vector_search.ExactSemanticSearch`` is the implementation."""

from __future__ import annotations

from typing import Protocol


class SemanticSearch(Protocol):
    """Semantic search over one user's served articles."""

    def search(self, user_id: int, query: str, limit: int) -> list[tuple[int, float]]:
        """At most ``limit`` (article id, cosine distance) pairs, closest first, each article once.
        Raises ``function.errors.EmbeddingFailed`` when the provider cannot embed the query."""
        ...
