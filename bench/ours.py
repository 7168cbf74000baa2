"""Our design, measured: one push delivery through the real Worker, GitHubSource and PeeweeStore.

It does what ``/events`` does for a delivery on Lambda (``function.events.run.run_push``): take the
connection kept from the last job (``job_store(keep=True)``, connecting only when there is none), process
the push under the user's lock, release the lock and keep the connection. The GitHub source is the one a warm
Lambda holds: its installation token is already cached, so the run pays for the repository only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import peewee

from bench.measure import Measured, measuring
from bench.rig import INSTALLATION_ID, Rig
from function.sources.github import GitHubSource
from function.store.facade import job_store
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync import Worker


def run_push(
    rig: Rig,
    source: GitHubSource,
    db: peewee.Database,
    repository: str,
    delivery: str,
    *,
    trace_memory: bool = False,
    keep: bool = True,
    worker_options: dict[str, Any] | None = None,
) -> Measured:
    """Process one push delivery of ``repository`` into ``db`` (through the relay) and measure it.

    ``db`` is kept by the caller across runs, as a warm Lambda keeps its bound database and, with
    ``keep``, its connection; without it each run connects and closes (``DATABASE_CONNECTIONS=per-job``)."""
    # As GitHub's push delivery does, the push names the head it produced.
    pushed_head = rig.github.head(repo=repository)
    push = PushRef(repository=repository, branch="main", installation_id=INSTALLATION_ID, after=pushed_head)
    info = DeliveryInfo(delivery_id=delivery, event="push", received_at=datetime.now(UTC))
    # Any: PeeweeStore's finish_delivery names its keywords, the worker's Protocol takes **fields.
    store: Any
    with measuring(rig, trace_memory=trace_memory) as measured, job_store(db, keep=keep) as store:
        summary = Worker(store, source, **(worker_options or {})).process_push(info, push)
    if summary.failed:
        raise RuntimeError(f"our worker failed {summary.failed} files: {summary.failures[:3]}")
    measured.notes = {"fetched": summary.fetched, "written": summary.written, "processed": summary.processed}
    return measured
