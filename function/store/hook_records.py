"""The plain records of the outgoing webhooks' tables (no Peewee object leaves the store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class EndpointRecord:
    id: str
    user_id: int
    user_name: str
    url: str
    events: tuple[str, ...]
    secret: str = field(repr=False)
    previous_secret: str | None = field(repr=False)
    previous_secret_until: datetime | None
    created_at: datetime
    failing_since: datetime | None
    disabled_at: datetime | None
    disabled_reason: str | None

    def secrets_at(self, now: datetime) -> list[str]:
        """The secrets to sign with at ``now``: the current one, and the previous one during its grace
        period after a rotation."""
        found = [self.secret]
        if self.previous_secret and self.previous_secret_until and now < self.previous_secret_until:
            found.append(self.previous_secret)
        return found

    def wants(self, event_type: str) -> bool:
        return event_type in self.events


@dataclass(frozen=True)
class EventRecord:
    id: str
    endpoint_id: str
    type: str
    message_id: str
    data: dict[str, Any]
    state: str  # pending | sending | delivered | failed
    revision: int
    attempts: int  # made since the event was created or last merged after a delivery
    next_attempt_at: datetime | None
    created_at: datetime
    updated_at: datetime
    delivered_at: datetime | None
    source: str | None


@dataclass(frozen=True)
class NewAttempt:
    """What one POST of an event got, as recorded."""

    event_id: str
    endpoint_id: str
    message_id: str
    number: int
    attempted_at: datetime
    status_code: int | None
    ok: bool
    error: str | None
    duration_ms: float
    answer: str | None


@dataclass(frozen=True)
class AttemptRecord:
    id: str
    event_id: str
    event_type: str
    endpoint_id: str
    message_id: str
    number: int
    attempted_at: datetime
    status_code: int | None
    ok: bool
    error: str | None
    duration_ms: float
    answer: str | None
