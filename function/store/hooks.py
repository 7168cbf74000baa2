"""The outgoing webhooks' tables: endpoints, the events waiting for them, and every attempt.

``HookStore(db)`` (``store.hooks``) works on the connection of the job it runs in (``Services.store()``),
like the rest of the store. What must not interleave is serialised by the database itself: queueing an event
writes the endpoint's row first (a row lock on MySQL/TiDB, the write lock on SQLite) and then reads the
endpoint's live event with ``SELECT ... FOR UPDATE`` (on TiDB a plain SELECT would read the snapshot
taken at BEGIN, before the push that held the row committed its event), so two pushes that end at once
merge into one pending event instead of adding two; and an endpoint is sent to by one
sender at a time (``claim``: a lease in its row), which is also what lets a change that arrives during
an attempt wait, merged, for the next one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from function.store.hook_endpoints import HookEndpoints, new_id
from function.store.hook_records import AttemptRecord, EventRecord, NewAttempt
from function.store.models import HookAttempt, HookEndpoint, HookEvent, to_naive_utc

# Merges the data of a pending event (first) with a newer one's (second).
Merge = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]

LIVE_STATES = ("pending", "sending")

_EVENT_COLUMNS = (
    HookEvent.id,
    HookEvent.endpoint,
    HookEvent.type,
    HookEvent.message_id,
    HookEvent.data,
    HookEvent.state,
    HookEvent.revision,
    HookEvent.attempts,
    HookEvent.next_attempt_at,
    HookEvent.created_at,
    HookEvent.updated_at,
    HookEvent.delivered_at,
    HookEvent.source,
)
_ATTEMPT_COLUMNS = (
    HookAttempt.id,
    HookAttempt.event,
    HookEvent.type,
    HookAttempt.endpoint,
    HookAttempt.message_id,
    HookAttempt.number,
    HookAttempt.attempted_at,
    HookAttempt.status_code,
    HookAttempt.ok,
    HookAttempt.error,
    HookAttempt.duration_ms,
    HookAttempt.answer,
)


class HookStore(HookEndpoints):
    """Reads and writes the outgoing webhooks' tables on ``db`` (connected by the caller's job); a part
    of ``PeeweeStore`` (``store.hooks``), or on its own for a database. The endpoints' queries are in
    ``function.store.hook_endpoints``, which this class extends with the events and the attempts."""

    # -- queueing --------------------------------------------------------------------------------

    def queue(
        self,
        endpoint_id: str,
        event_type: str,
        data: Mapping[str, Any],
        now: datetime,
        *,
        message_id: str,
        merge: Merge | None = None,
        source: str | None = None,
    ) -> EventRecord | None:
        """Add an event for the endpoint, due now; with ``merge``, fold it into the endpoint's live
        event of that type instead (pending, or being sent: the sender then sends the merged one again),
        which gets ``message_id`` and one more revision. None when the endpoint is gone."""
        now = to_naive_utc(now)
        with self._job(write=True):
            # The endpoint's row first: concurrent queueing for it takes turns from here. The reads
            # after it lock (``_locking``): they must see what the session before us committed.
            HookEndpoint.update(queued_at=now).where(HookEndpoint.id == endpoint_id).bind(self._db).execute()
            endpoint = HookEndpoint.select(HookEndpoint.id).where(HookEndpoint.id == endpoint_id)
            if self._first(self._locking(endpoint)) is None:
                return None
            live = None
            if merge is not None:
                live = self._event_where(
                    (HookEvent.endpoint == endpoint_id)
                    & (HookEvent.type == event_type)
                    & HookEvent.state.in_(LIVE_STATES),
                    newest=True,
                    locking=True,
                )
            if live is not None:
                assert merge is not None
                HookEvent.update(
                    data=_json(merge(live.data, data)),
                    message_id=message_id,
                    revision=HookEvent.revision + 1,
                    updated_at=now,
                    source=source,
                ).where(HookEvent.id == live.id).bind(self._db).execute()
                event_id = live.id
            else:
                event_id = new_id("evt_")
                HookEvent.insert(
                    id=event_id,
                    endpoint=endpoint_id,
                    type=event_type,
                    message_id=message_id,
                    data=_json(data),
                    state="pending",
                    next_attempt_at=now,
                    created_at=now,
                    updated_at=now,
                    source=source,
                ).bind(self._db).execute()
            return self._event_where(HookEvent.id == event_id)

    # -- sending ---------------------------------------------------------------------------------

    def claim(self, endpoint_id: str, now: datetime, until: datetime) -> bool:
        """Take the endpoint's send lease until ``until`` (unless someone else holds it, or it is
        disabled); only the holder sends to it."""
        now, until = to_naive_utc(now), to_naive_utc(until)
        with self._job():
            taken = (
                HookEndpoint.update(sending_until=until)
                .where(
                    HookEndpoint.id == endpoint_id,
                    HookEndpoint.disabled_at.is_null(),
                    HookEndpoint.sending_until.is_null() | (HookEndpoint.sending_until < now),
                )
                .bind(self._db)
                .execute()
            )
        return bool(taken)

    def release(self, endpoint_id: str, until: datetime) -> None:
        """Give the lease taken until ``until`` back (not one someone took over after it expired)."""
        with self._job():
            HookEndpoint.update(sending_until=None).where(
                HookEndpoint.id == endpoint_id, HookEndpoint.sending_until == to_naive_utc(until)
            ).bind(self._db).execute()

    def next_due(self, endpoint_id: str, now: datetime) -> EventRecord | None:
        """The endpoint's next event to send: due and pending, or left ``sending`` by a sender that
        died (only the lease holder asks, so no one else is sending it)."""
        due = (HookEvent.state == "sending") | (
            (HookEvent.state == "pending") & (HookEvent.next_attempt_at <= to_naive_utc(now))
        )
        with self._job():
            return self._event_where((HookEvent.endpoint == endpoint_id) & due)

    def mark_sending(self, event_id: str) -> None:
        with self._job():
            HookEvent.update(state="sending").where(HookEvent.id == event_id).bind(self._db).execute()

    def finish_attempt(
        self, attempt: NewAttempt, *, revision: int, retry_at: datetime | None, now: datetime
    ) -> str:
        """Record the attempt and move its event on; returns the event's state after it.

        A 2xx delivers the event, unless changes were merged into it meanwhile (``revision`` moved):
        then it is pending again, due now. A failure makes it pending until ``retry_at``, or failed
        when there is none (and no change was merged meanwhile)."""
        now = to_naive_utc(now)
        attempts = HookEvent.attempts + 1
        with self._job(write=True):
            HookAttempt.insert(id=new_id("att_"), **_attempt_row(attempt)).bind(self._db).execute()
            this = HookEvent.id == attempt.event_id
            unchanged = this & (HookEvent.revision == revision)
            if attempt.ok:
                done = HookEvent.update(
                    state="delivered", attempts=attempts, next_attempt_at=None, delivered_at=now
                )
            elif retry_at is not None:
                HookEvent.update(
                    state="pending", attempts=attempts, next_attempt_at=to_naive_utc(retry_at)
                ).where(this).bind(self._db).execute()
                return "pending"
            else:
                done = HookEvent.update(state="failed", attempts=attempts, next_attempt_at=None)
            if done.where(unchanged).bind(self._db).execute():
                return "delivered" if attempt.ok else "failed"
            # Merged meanwhile: what was merged has not been sent yet.
            HookEvent.update(state="pending", attempts=0, next_attempt_at=now).where(this).bind(
                self._db
            ).execute()
            return "pending"

    def due_endpoints(self, now: datetime, limit: int = 100) -> list[str]:
        """Enabled endpoints with an event due (or left being sent), for the scheduled sweep."""
        due = (HookEvent.state == "sending") | (
            (HookEvent.state == "pending") & (HookEvent.next_attempt_at <= to_naive_utc(now))
        )
        query = (
            HookEvent.select(HookEvent.endpoint)
            .join(HookEndpoint, on=(HookEvent.endpoint == HookEndpoint.id))
            .where(due, HookEndpoint.disabled_at.is_null())
            .distinct()
            .limit(limit)
        )
        rows: Any = query.tuples().bind(self._db)
        with self._job():
            return [row[0] for row in rows]

    # -- reading ---------------------------------------------------------------------------------

    def event(self, event_id: str) -> EventRecord | None:
        with self._job():
            return self._event_where(HookEvent.id == event_id)

    def live_events(self, endpoint_id: str) -> int:
        """How many events wait for the endpoint (pending or being sent)."""
        with self._job():
            return int(
                HookEvent.select()
                .where(HookEvent.endpoint == endpoint_id, HookEvent.state.in_(LIVE_STATES))
                .bind(self._db)
                .count()
            )

    def attempts(self, endpoint_id: str | None = None, limit: int = 20) -> list[AttemptRecord]:
        """The newest attempts first (of one endpoint)."""
        query = HookAttempt.select(*_ATTEMPT_COLUMNS).join(HookEvent, on=(HookAttempt.event == HookEvent.id))
        if endpoint_id is not None:
            query = query.where(HookAttempt.endpoint == endpoint_id)
        query = query.order_by(HookAttempt.attempted_at.desc(), HookAttempt.id.desc()).limit(limit)
        rows: Any = query.tuples().bind(self._db)
        with self._job():
            return [AttemptRecord(*row) for row in rows]

    def _event_where(self, where: Any, *, newest: bool = False, locking: bool = False) -> EventRecord | None:
        query = HookEvent.select(*_EVENT_COLUMNS).where(where)
        order = HookEvent.created_at.desc() if newest else HookEvent.next_attempt_at
        query = query.order_by(order, HookEvent.created_at, HookEvent.id)
        row = self._first(self._locking(query) if locking else query)
        return _event(row) if row else None


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _event(row: tuple[Any, ...]) -> EventRecord:
    values = list(row)
    values[4] = json.loads(values[4])
    return EventRecord(*values)


def _attempt_row(attempt: NewAttempt) -> dict[str, Any]:
    return {
        "event": attempt.event_id,
        "endpoint": attempt.endpoint_id,
        "message_id": attempt.message_id,
        "number": attempt.number,
        "attempted_at": to_naive_utc(attempt.attempted_at),
        "status_code": attempt.status_code,
        "ok": attempt.ok,
        "error": attempt.error,
        "duration_ms": attempt.duration_ms,
        "answer": attempt.answer,
    }
