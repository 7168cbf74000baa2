"""Running the worker for one push, with the delivery's logs (shared by inline mode and /events)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from function.aws.deadline import UNLIMITED, Deadline
from function.observability import metrics
from function.observability.logs import COMPLETE_MESSAGE
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo

if TYPE_CHECKING:
    from function.services import Services
    from function.worker.sync import SyncSummary

log = logging.getLogger(__name__)

# When the outgoing webhooks are sent: given the sending, runs it now (the default, on the worker's
# asynchronous path) or later (inline mode: after the answer, which GitHub must not wait for).
Later = Callable[[Callable[[], None]], None]


def run_now(work: Callable[[], None]) -> None:
    work()


def parse_time(value: str | None) -> datetime:
    """An ISO 8601 time as naive UTC; now when absent or unreadable."""
    if value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if parsed.tzinfo is not None:
                parsed = parsed.astimezone(UTC)
            return parsed.replace(tzinfo=None)
        except ValueError:
            pass
    return datetime.now(UTC).replace(tzinfo=None)


def run_push(
    svc: Services,
    delivery: str,
    event: str,
    received_at: str | None,
    push: PushRef,
    *,
    deadline: Deadline = UNLIMITED,
    later: Later = run_now,
) -> SyncSummary:
    """Sync the pushing user's articles within ``deadline``; logs ``Webhook processing complete``.
    Once the sync is over (committed, or failed), the user's webhook endpoints are told, sent through
    ``later``."""
    started = time.perf_counter()
    info = DeliveryInfo(delivery_id=delivery, event=event, received_at=parse_time(received_at))
    try:
        with svc.store() as store:
            summary = svc.worker(store).process_push(info, push, deadline=deadline)
    except Exception as exc:
        metrics.record_processing_error(svc.metrics(), delivery, type(exc).__name__)
        log_complete(delivery, started, "failed", level=logging.WARNING, error_type=type(exc).__name__)
        svc.after_sync(
            exc, installation_id=push.installation_id, delivery=delivery, deadline=deadline, later=later
        )
        raise
    duration_ms = log_complete(delivery, started, summary.outcome, **summary.log_fields())
    metrics.record_processing(svc.metrics(), summary, duration_ms, delivery)
    svc.after_sync(
        summary, installation_id=push.installation_id, delivery=delivery, deadline=deadline, later=later
    )
    return summary


def log_complete(
    delivery: str, started: float, outcome: str, *, level: int = logging.INFO, **fields: object
) -> float:
    """Log ``Webhook processing complete`` for a delivery that is done, whatever became of it, with the
    counts section 8 of the contract names (zero when nothing was synced). Returns its duration_ms."""
    duration_ms = round((time.perf_counter() - started) * 1000, 1)
    counts = {"processed": 0, "succeeded": 0, "failed": 0}
    log.log(
        level,
        COMPLETE_MESSAGE,
        extra={"delivery": delivery, "duration_ms": duration_ms, "outcome": outcome, **counts, **fields},
    )
    return duration_ms
