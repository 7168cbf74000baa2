"""The outgoing webhooks' endpoints: who is told, with which secret, and whether they are healthy.

A part of ``HookStore`` (``function.store.hooks``), which also holds the events and attempts.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from function.store.base import StoreBase
from function.store.batching import write_transaction
from function.store.connection import translate_errors
from function.store.hook_records import EndpointRecord
from function.store.models import HookAttempt, HookEndpoint, HookEvent, User, to_naive_utc

_ENDPOINT_COLUMNS = (
    HookEndpoint.id,
    HookEndpoint.user,
    User.name,
    HookEndpoint.url,
    HookEndpoint.events,
    HookEndpoint.secret,
    HookEndpoint.previous_secret,
    HookEndpoint.previous_secret_until,
    HookEndpoint.created_at,
    HookEndpoint.failing_since,
    HookEndpoint.disabled_at,
    HookEndpoint.disabled_reason,
)


def new_id(prefix: str) -> str:
    """A random id (``ep_``, ``evt_``, ``att_``): never ordered by, never guessed from another."""
    return prefix + secrets.token_hex(8 if prefix == "ep_" else 12)


class HookQueries(StoreBase):
    """What the outgoing webhooks' queries share: each runs as one job step, a write in one transaction."""

    @contextmanager
    def _job(self, *, write: bool = False) -> Iterator[None]:
        with translate_errors():
            if write:
                with write_transaction(self._db):
                    yield
            else:
                yield


class HookEndpoints(HookQueries):
    """Reads and writes the endpoints' rows on the caller's connection."""

    def add_endpoint(
        self, user_id: int, url: str, events: Sequence[str], secret: str, now: datetime
    ) -> EndpointRecord:
        endpoint_id = new_id("ep_")
        with self._job():
            HookEndpoint.insert(
                id=endpoint_id,
                user=user_id,
                url=url,
                events=",".join(events),
                secret=secret,
                created_at=to_naive_utc(now),
            ).bind(self._db).execute()
        found = self.endpoint(endpoint_id)
        assert found is not None
        return found

    def endpoint(self, endpoint_id: str) -> EndpointRecord | None:
        with self._job():
            rows = self._endpoints(HookEndpoint.id == endpoint_id)
        return rows[0] if rows else None

    def endpoints(self, user_id: int | None = None) -> list[EndpointRecord]:
        """Every endpoint (of one user), by user name then creation."""
        with self._job():
            return self._endpoints(None if user_id is None else HookEndpoint.user == user_id)

    def endpoints_for(self, user_id: int, event_type: str) -> list[EndpointRecord]:
        """The user's endpoints subscribed to ``event_type`` (disabled ones too: their events wait)."""
        return [e for e in self.endpoints(user_id) if e.wants(event_type)]

    def _endpoints(self, where: Any) -> list[EndpointRecord]:
        query = HookEndpoint.select(*_ENDPOINT_COLUMNS).join(User, on=(HookEndpoint.user == User.id))
        if where is not None:
            query = query.where(where)
        rows: Any = query.order_by(User.name, HookEndpoint.created_at, HookEndpoint.id).tuples()
        return [_endpoint(row) for row in rows.bind(self._db)]

    def remove_endpoint(self, endpoint_id: str) -> bool:
        """Delete the endpoint with its events and attempts (ON DELETE CASCADE); False if unknown."""
        with self._job(write=True):
            HookAttempt.delete().where(HookAttempt.endpoint == endpoint_id).bind(self._db).execute()
            HookEvent.delete().where(HookEvent.endpoint == endpoint_id).bind(self._db).execute()
            removed = HookEndpoint.delete().where(HookEndpoint.id == endpoint_id).bind(self._db).execute()
        return bool(removed)

    def rotate_secret(self, endpoint_id: str, secret: str, previous_until: datetime) -> EndpointRecord | None:
        """Sign with ``secret`` from now on, and with the current one too until ``previous_until``."""
        with self._job(write=True):
            # Read first: MySQL assigns SET columns left to right, so "previous = secret" beside
            # "secret = new" would depend on the order Peewee writes them in. The read locks the row:
            # two rotations at once take turns, and the second keeps the first one's secret.
            current = HookEndpoint.select(HookEndpoint.secret).where(HookEndpoint.id == endpoint_id)
            row = self._first(self._locking(current))
            if row is None:
                return None
            HookEndpoint.update(
                previous_secret=row[0], previous_secret_until=to_naive_utc(previous_until), secret=secret
            ).where(HookEndpoint.id == endpoint_id).bind(self._db).execute()
        return self.endpoint(endpoint_id)

    # -- health ----------------------------------------------------------------------------------

    def mark_healthy(self, endpoint_id: str) -> None:
        """A 2xx: no longer failing, and enabled again if it was disabled."""
        with self._job():
            HookEndpoint.update(failing_since=None, disabled_at=None, disabled_reason=None).where(
                HookEndpoint.id == endpoint_id
            ).bind(self._db).execute()

    def mark_failing(self, endpoint_id: str, now: datetime) -> datetime:
        """Note a failed attempt; returns since when the endpoint has been failing (now, or earlier)."""
        now = to_naive_utc(now)
        with self._job():
            HookEndpoint.update(failing_since=now).where(
                HookEndpoint.id == endpoint_id, HookEndpoint.failing_since.is_null()
            ).bind(self._db).execute()
            row = (
                HookEndpoint.select(HookEndpoint.failing_since)
                .where(HookEndpoint.id == endpoint_id)
                .tuples()
                .bind(self._db)
                .first()
            )
        return row[0] if row and row[0] else now

    def disable(self, endpoint_id: str, now: datetime, reason: str) -> bool:
        """Disable the endpoint (its events wait); False when it was disabled already."""
        with self._job():
            changed = (
                HookEndpoint.update(disabled_at=to_naive_utc(now), disabled_reason=reason[:2000])
                .where(HookEndpoint.id == endpoint_id, HookEndpoint.disabled_at.is_null())
                .bind(self._db)
                .execute()
            )
        return bool(changed)


def _endpoint(row: tuple[Any, ...]) -> EndpointRecord:
    values = list(row)
    values[4] = tuple(t for t in str(values[4]).split(",") if t)
    return EndpointRecord(*values)
