"""What a finished sync means for the user's webhook endpoints.

Called once the sync has committed (never inside its transactions, never before GitHub's answer):
the events are queued in one short transaction per endpoint, and ``later`` decides when they are sent
(at once on the worker's asynchronous path, after the answer in inline mode). Nothing here ever makes
the delivery fail: the articles are stored either way, so a webhook problem is logged and left to the
sweep, not retried by redelivering the push.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from function.aws.deadline import UNLIMITED, Deadline
from function.errors import DatabaseUnavailable, UnknownInstallation

if TYPE_CHECKING:
    # For the types only: the worker is above this package, and calls it with its summary.
    from function.hooks.dispatch import HookDispatcher
    from function.store.facade import PeeweeStore
    from function.worker.sync import SyncSummary

log = logging.getLogger(__name__)

# Runs the sending: now, or after the response (inline mode).
Later = Callable[[Callable[[], None]], None]

# Why a sync failed, as a front end may be told (an exception's own text may name internal hosts).
_REASONS = {
    "SourceUnavailable": "GitHub unavailable",
    "SourcePermanentError": "GitHub refused the App",
    "GitHubAuthError": "GitHub refused the App",
    "InstallationNotFound": "GitHub App uninstalled",
    "LockTimeout": "another sync of this blog took too long",
}


def run_now(work: Callable[[], None]) -> None:
    work()


class HookServices(Protocol):
    """What telling the front ends needs of ``function.services.Services``: a job's store, and the
    dispatcher on it."""

    def store(self) -> AbstractContextManager[PeeweeStore]: ...
    def hooks(self, store: PeeweeStore) -> HookDispatcher: ...


def after_sync(
    services: HookServices,
    outcome: SyncSummary | BaseException,
    *,
    installation_id: int | None = None,
    user_name: str | None = None,
    delivery: str | None = None,
    deadline: Deadline = UNLIMITED,
    later: Later = run_now,
) -> list[str]:
    """Queue ``articles.changed`` for what readers see change and ``sync.failed`` for a failed sync
    (``outcome``: the SyncSummary, or the exception the sync raised), for the user of the installation
    (or named ``user_name``); then hand the sending to ``later``. A sync that changed nothing readers
    see and did not fail costs nothing: not one statement. Returns the endpoints queued for."""
    changes = None if isinstance(outcome, BaseException) else outcome.changes
    books = None if isinstance(outcome, BaseException) else outcome.book_changes
    reason = failure_reason(outcome)
    if not changes and not books and reason is None:
        return []
    try:
        with services.store() as store:
            if installation_id is not None:
                user = store.find_user_by_installation(installation_id)
            else:
                user = store.get_user(user_name or "")
            if user is None:
                return []
            hooks = services.hooks(store)
            queued = []
            if changes or books:
                slugs = [*changes.published, *changes.updated, *changes.unpublished] if changes else []
                queued += hooks.queue_changes(
                    user.id,
                    user.name,
                    published=changes.published if changes else [],
                    updated=changes.updated if changes else [],
                    unpublished=changes.unpublished if changes else [],
                    head_sha=None if isinstance(outcome, BaseException) else outcome.head_sha,
                    source=delivery,
                    books=books.to_json() if books else None,
                    # Titles and thumbnails for each entry's share image: one SELECT, none without
                    # articles (a sync that changed only books).
                    cards=store.reads.article_cards(user.id, slugs) if slugs else {},
                )
            if reason is not None:
                summary = None if isinstance(outcome, BaseException) else outcome
                queued += hooks.queue_failure(
                    user.id,
                    user.name,
                    delivery=delivery,
                    head_sha=summary.head_sha if summary else None,
                    reason=reason,
                    failed_paths=[f.path for f in summary.failures] if summary else [],
                    left=len(summary.left) if summary else 0,
                )
    except Exception as exc:  # noqa: BLE001 - the sync is committed; the webhooks must not undo that
        log.error("Webhook events not queued", extra={"delivery": delivery, "error": _describe(exc)})
        return []
    if queued:
        later(lambda: send(services, queued, deadline, delivery))
    return queued


def send(
    services: HookServices, endpoint_ids: list[str], deadline: Deadline, delivery: str | None = None
) -> None:
    """Send what is due to these endpoints (the sweep sends what is left)."""
    try:
        with services.store() as store:
            report = services.hooks(store).deliver(endpoint_ids, deadline)
    except Exception as exc:  # noqa: BLE001 - left to the sweep, logged
        log.error("Webhooks not sent", extra={"delivery": delivery, "error": _describe(exc)})
        return
    log.info("Webhooks sent", extra={"delivery": delivery, **report.to_json()})


def failure_reason(outcome: SyncSummary | BaseException) -> str | None:
    """Why the sync failed, in words a front end may see; None when it did not fail (or when nothing
    could be queued anyway: no database, no user for the installation)."""
    if isinstance(outcome, BaseException):
        if isinstance(outcome, DatabaseUnavailable | UnknownInstallation):
            return None
        return _REASONS.get(type(outcome).__name__, f"sync error ({type(outcome).__name__})")
    if outcome.skipped_reason or outcome.outcome != "failed":
        return None
    if outcome.left:
        return "time budget reached"
    return "files could not be fetched"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]
