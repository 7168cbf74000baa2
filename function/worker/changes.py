"""What a sync changed for readers, by slug: what the outgoing webhooks tell front ends."""

from __future__ import annotations

from dataclasses import dataclass, field

from function.store.records import ApplyResult


@dataclass
class ReaderChanges:
    """Slugs readers see appear (``published``), change (``updated``) or disappear (``unpublished``),
    summed over the transactions of one sync (each slug is written by one of them)."""

    published: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unpublished: list[str] = field(default_factory=list)

    def add(self, result: ApplyResult) -> None:
        """Add one ``ApplyResult``'s slugs."""
        self.published += result.published
        self.updated += result.updated
        self.unpublished += result.unpublished

    def __bool__(self) -> bool:
        return bool(self.published or self.updated or self.unpublished)
