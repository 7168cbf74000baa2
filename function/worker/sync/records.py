"""The delivery record the worker keeps for each push: started, then finished with its counts and error.

Operators read it (``blog-api deliveries``), and replays are judged by it, so it says what may pass on
a retry before what will not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime

from function.store.records import Outcome
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync.ports import DeliveryLog
from function.worker.sync.summary import LEFT_PATHS_SHOWN, FileFailure, SyncSummary

Clock = Callable[[], datetime]


class DeliveryRecorder:
    """Writes one push delivery's record through the store's delivery log."""

    def __init__(self, deliveries: DeliveryLog, clock: Clock) -> None:
        self._deliveries = deliveries
        self._clock = clock

    def start(self, delivery: DeliveryInfo, push: PushRef) -> None:
        self._deliveries.start_delivery(
            delivery.delivery_id,
            delivery.event,
            push.installation_id,
            push.repository,
            delivery.received_at,
            self._clock(),
        )

    def finish(
        self, delivery: DeliveryInfo, summary: SyncSummary, *, release_lock_of: int | None = None
    ) -> None:
        """Record a sync's end: its counts, outcome and error text (``release_lock_of``: and release that
        user's lock, in the same round trip)."""
        finish = (
            self._deliveries.finish_delivery
            if release_lock_of is None
            else functools.partial(self._deliveries.finish_and_release, release_lock_of)
        )
        finish(
            delivery.delivery_id,
            head_sha=summary.head_sha,
            processed=summary.processed,
            succeeded=summary.succeeded,
            failed=summary.failed,
            archived=summary.archived,
            outcome=summary.outcome,
            error=delivery_error(summary),
            now=self._clock(),
            written=summary.written,
            unchanged=summary.unchanged,
            retryable=summary.head_retryable,
        )

    def finish_failed(self, delivery: DeliveryInfo, error: str) -> None:
        self.finish_empty(delivery, Outcome.FAILED, error)

    def finish_empty(
        self, delivery: DeliveryInfo, outcome: Outcome, error: str | None, head_sha: str | None = None
    ) -> None:
        """Record a delivery that ended before any article was read: every count zero."""
        self._deliveries.finish_delivery(
            delivery.delivery_id,
            head_sha=head_sha,
            processed=0,
            succeeded=0,
            failed=0,
            archived=0,
            outcome=outcome,
            error=error,
            now=self._clock(),
        )


def delivery_error(summary: SyncSummary) -> str | None:
    """The delivery record's error text. What may pass on retry comes first, so the cut keeps it; whether
    the delivery may pass on a retry is the record's ``retryable`` column, not a mark in this text."""
    parts = [] if summary.listing_complete else ["tree listing truncated, nothing archived"]
    if summary.left:
        shown = ", ".join(summary.left[:LEFT_PATHS_SHOWN])
        more = len(summary.left) - LEFT_PATHS_SHOWN
        parts.append(
            f"time budget reached, {len(summary.left)} files left for the next run: {shown}"
            + (f" and {more} more" if more > 0 else "")
        )
    parts += [_failure_text(f) for f in sorted(summary.failures, key=lambda f: not f.retryable)]
    parts += [f"warning: {w.path}: {w.message}" for w in summary.warnings]
    return "; ".join(parts)[:2000] or None


def _failure_text(failure: FileFailure) -> str:
    return f"{failure.path}: {failure.message}"
