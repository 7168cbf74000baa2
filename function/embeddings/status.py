"""What ``blog-api search status`` says of semantic search: whether it is on, with which model, and how
many served articles still lack current vectors (they are embedded at the next push of their blog)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from function.embeddings.port import EmbeddingProvider
from function.store.embeddings import EmbeddingQueries

if TYPE_CHECKING:
    from function.settings import Settings
    from function.store.facade import PeeweeStore
    from function.store.records import UserRecord


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


def status_line(status: VectorStatus, user_name: str) -> str:
    """One user's line of ``blog-api search status`` for the vectors."""
    if status.model is None:
        return "semantic: off (EMBEDDING_PROVIDER is not set)"
    missing = status.missing.get(user_name, 0)
    if not missing:
        return f"semantic: every served article has its vectors ({status.model})"
    return (
        f"semantic: {missing} served article{'s' if missing != 1 else ''} without current vectors "
        f"({status.model}): the next push computes them, or `blog-api sync --user {user_name}`"
    )


def status_part(settings: Settings) -> Callable[[PeeweeStore, UserRecord], str]:
    """The vectors' part of ``blog-api search status`` for the provider ``settings`` name: a function of
    a store and a user that answers that user's line (one SELECT; the provider is not called)."""
    from function.embeddings.wiring import provider_from_settings

    provider = provider_from_settings(settings)

    def part(store: PeeweeStore, user: UserRecord) -> str:
        queries = EmbeddingQueries(store.session)
        status = vector_status(settings.embedding_provider, provider, queries, user_id=user.id)
        return status_line(status, user.name)

    return part
