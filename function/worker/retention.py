"""Deleting old delivery records, from the scheduled sweep.

Every delivery the worker sees leaves a row (idempotency, ``blog-api deliveries``); without an end the
table grows by every push for ever, and with it what a read of it costs. A record older than
``DELIVERY_RETENTION_DAYS`` goes, in bounded rounds (each its own short DELETE, far inside TiDB's
transaction limits), except each repository's latest sync: a replayed push is compared with it
(``last_sync``), however long the blog has been quiet.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from function.aws.deadline import UNLIMITED, Deadline

if TYPE_CHECKING:
    from function.services import Services

log = logging.getLogger(__name__)

# Deliveries deleted per round (one DELETE by primary key), and rounds per sweep: a sweep deletes at most
# their product; what is left goes at the next sweep.
PER_ROUND = 500
MAX_ROUNDS = 20
# A round is a few statements: one is not started with less time than this left.
ROUND_S = 2.0


class OldDeliveries(Protocol):
    """What the retention needs of ``function.store.deliveries.DeliveryQueries``."""

    def forget_old_deliveries(self, received_before: datetime, limit: int) -> int: ...


@dataclass
class RetentionReport:
    deleted: int = 0
    rounds: int = 0
    done: bool = False  # nothing older is left but the repositories' last syncs


def forget_old_deliveries(
    deliveries: OldDeliveries,
    now: datetime,
    retention: timedelta,
    *,
    per_round: int = PER_ROUND,
    max_rounds: int = MAX_ROUNDS,
    deadline: Deadline = UNLIMITED,
) -> RetentionReport:
    """Delete the deliveries received before ``now - retention``, ``per_round`` at a time (oldest first),
    until a round finds nothing to delete, ``max_rounds`` ran, or ``deadline`` leaves no time for
    another round."""
    report = RetentionReport()
    before = now - retention
    while report.rounds < max_rounds and deadline.allows(ROUND_S):
        deleted = deliveries.forget_old_deliveries(before, per_round)
        report.rounds += 1
        report.deleted += deleted
        if deleted == 0:
            # Nothing older is left but the kept syncs: one per repository, so fewer than a round
            # while the repositories are fewer than ``per_round`` (they fill a round before any other).
            report.done = True
            break
    return report


def forget_old_deliveries_of(
    services: Services, now: datetime, deadline: Deadline = UNLIMITED
) -> RetentionReport | None:
    """The scheduled sweep's part for the delivery records: a failure is logged and left for the next
    sweep, and never stops the rest of the sweep."""
    retention = timedelta(days=services.settings.delivery_retention_days)
    try:
        with services.store() as store:
            report = forget_old_deliveries(store.deliveries, now, retention, deadline=deadline)
    except Exception:
        log.exception("Deleting old delivery records failed; the next sweep tries again")
        return None
    if report.deleted:
        log.info(
            "Deleted old delivery records",
            extra={"deleted": report.deleted, "rounds": report.rounds, "done": report.done},
        )
    return report
