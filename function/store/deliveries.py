"""Deliveries: one record per GitHub delivery the worker saw, for idempotency and operators."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Unpack

from function.observability.logs import redact
from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.batching import upsert_many
from function.store.models import (
    ERROR_MAX_CHARS,
    OUTCOMES,
    Delivery,
    to_naive_utc,
)
from function.store.records import (
    DeliveryFinish,
    DeliveryRecord,
    Outcome,
)

log = logging.getLogger(__name__)


_DELIVERY_COLUMNS = (
    Delivery.delivery_id,
    Delivery.event,
    Delivery.installation_id,
    Delivery.repository,
    Delivery.received_at,
    Delivery.started_at,
    Delivery.finished_at,
    Delivery.head_sha,
    Delivery.processed,
    Delivery.succeeded,
    Delivery.failed,
    Delivery.archived,
    Delivery.outcome,
    Delivery.error,
    Delivery.attempts,
    Delivery.written,
    Delivery.unchanged,
    Delivery.retryable,
)


class DeliveryQueries(StoreBase):
    @_translated
    def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        """The delivery's record, or None when it was never started."""
        row = self._first(Delivery.select(*_DELIVERY_COLUMNS).where(Delivery.delivery_id == delivery_id))
        return DeliveryRecord(*row) if row else None

    @_translated
    def start_delivery(
        self,
        delivery_id: str,
        event: str,
        installation_id: int | None,
        repository: str | None,
        received_at: datetime,
        now: datetime,
    ) -> None:
        """Record that processing starts: a new row (attempts 1), or on a redelivery attempts + 1,
        started_at = now, outcome "processing" and the previous finish cleared. One statement."""
        now = to_naive_utc(now)
        row = {
            "delivery_id": delivery_id,
            "event": event,
            "installation_id": installation_id,
            "repository": repository,
            "received_at": to_naive_utc(received_at),
            "started_at": now,
            "outcome": "processing",
            "attempts": 1,
        }
        upsert_many(
            self._db,
            Delivery,
            [row],
            conflict_target=[Delivery.delivery_id],
            update={
                Delivery.attempts: Delivery.attempts + 1,
                Delivery.started_at: now,
                Delivery.outcome: "processing",
                Delivery.finished_at: None,
                Delivery.error: None,
                Delivery.retryable: None,
            },
        )

    @_translated
    def finish_delivery(self, delivery_id: str, **finish: Unpack[DeliveryFinish]) -> None:
        """Record how processing ended (one UPDATE). ``error`` is redacted and cut to ERROR_MAX_CHARS.
        A delivery that was never started is left alone. Raises ValueError for an unknown outcome."""
        if finish["outcome"] not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}")
        error = finish["error"]
        Delivery.update(
            head_sha=finish["head_sha"],
            processed=finish["processed"],
            succeeded=finish["succeeded"],
            failed=finish["failed"],
            archived=finish["archived"],
            outcome=finish["outcome"],
            # Operators read it through the API and the CLI: no token or password in it.
            error=redact(error)[:ERROR_MAX_CHARS] if error else error,
            finished_at=to_naive_utc(finish["now"]),
            written=finish.get("written"),
            unchanged=finish.get("unchanged"),
            retryable=finish.get("retryable", False),
        ).where(Delivery.delivery_id == delivery_id).bind(self._db).execute()

    @_translated
    def last_sync(self, installation_id: int, repository: str) -> DeliveryRecord | None:
        """The latest delivery of this installation and repository that synced a head (a success or
        a partial one), or None: what a replayed push is compared with."""
        row = self._first(_last_sync_of(Delivery, installation_id, repository))
        return DeliveryRecord(*row) if row else None

    @_translated
    def held_since(self, since: datetime) -> list[DeliveryRecord]:
        """The deliveries the safety valve held (``held``) received at or after ``since``, oldest first."""
        return [DeliveryRecord(*row) for row in self._rows(held_since_query(since))]

    @_translated
    def delivery_and_last_sync(
        self, delivery_id: str, installation_id: int, repository: str
    ) -> tuple[DeliveryRecord | None, DeliveryRecord | None]:
        """``get_delivery`` and ``last_sync`` in one SELECT (a push asks for both under its lock, and a
        round trip costs 35 ms through the proxy): the delivery's own record, and the record of the
        latest sync of its repository, which may be the same row."""
        last = Delivery.alias("last_sync")
        latest = _last_sync_of(last, installation_id, repository).select(last.delivery_id)
        query = Delivery.select(*_DELIVERY_COLUMNS, (Delivery.delivery_id == latest).alias("latest")).where(
            (Delivery.delivery_id == delivery_id) | (Delivery.delivery_id == latest)
        )
        own = synced = None
        for *row, is_latest in self._rows(query):
            record = DeliveryRecord(*row)
            if record.delivery_id == delivery_id:
                own = record
            if is_latest:
                synced = record
        return own, synced

    @_translated
    def forget_old_deliveries(self, received_before: datetime, limit: int) -> int:
        """Delete at most ``limit`` of the deliveries received before ``received_before``, oldest first,
        except each repository's latest sync (what ``last_sync`` answers, however old: a replayed push
        is compared with it); how many were deleted. A SELECT of the oldest rows (by the
        ``received_at`` index), one ``last_sync`` read per repository among them (by its index), and
        one DELETE by primary key: a round is as small as ``limit`` makes it, whatever the table holds."""
        before = to_naive_utc(received_before)
        oldest = (
            Delivery.select(
                Delivery.delivery_id,
                Delivery.installation_id,
                Delivery.repository,
                Delivery.head_sha,
                Delivery.outcome,
            )
            .where(Delivery.received_at < before)
            .order_by(Delivery.received_at, Delivery.delivery_id)
            .limit(max(limit, 0))
        )
        rows = self._rows(oldest)
        synced = {
            (installation, repository)
            for _, installation, repository, head_sha, outcome in rows
            if installation is not None
            and repository is not None
            and head_sha is not None
            and outcome in COMPLETE_OUTCOMES
        }
        kept: set[str] = set()
        for installation, repository in sorted(synced):
            latest_sync = _last_sync_of(Delivery, installation, repository).select(Delivery.delivery_id)
            latest = self._first(latest_sync)
            if latest:
                kept.add(latest[0])
        doomed = [row[0] for row in rows if row[0] not in kept]
        if not doomed:
            return 0
        query = Delivery.delete().where(Delivery.delivery_id.in_(doomed), Delivery.received_at < before)
        return int(query.bind(self._db).execute())

    @_translated
    def recent_deliveries(self, limit: int) -> list[DeliveryRecord]:
        """The ``limit`` most recently received deliveries, newest first."""
        query = (
            Delivery.select(*_DELIVERY_COLUMNS)
            .order_by(Delivery.received_at.desc(), Delivery.delivery_id.desc())
            .limit(max(limit, 0))
        )
        return [DeliveryRecord(*row) for row in self._rows(query)]


COMPLETE_OUTCOMES = ("success", "partial")


def held_since_query(since: datetime) -> Any:
    """The deliveries the safety valve held, received at or after ``since``, oldest first."""
    return (
        Delivery.select(*_DELIVERY_COLUMNS)
        .where(Delivery.outcome == Outcome.HELD.value, Delivery.received_at >= to_naive_utc(since))
        .order_by(Delivery.received_at)
    )


def _last_sync_of(table: Any, installation_id: int, repository: str) -> Any:
    """The SELECT of ``last_sync`` (on ``table``: the model, or an alias of it in a subquery)."""
    return (
        table.select(*(getattr(table, column.name) for column in _DELIVERY_COLUMNS))
        .where(
            (table.installation_id == installation_id)
            & (table.repository == repository)
            & table.head_sha.is_null(False)
            & table.outcome.in_(COMPLETE_OUTCOMES)
        )
        .order_by(table.started_at.desc(), table.delivery_id.desc())
        .limit(1)
    )
