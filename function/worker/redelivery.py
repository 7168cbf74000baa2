"""Redelivering failed GitHub App webhook deliveries, as GitHub documents it for an App.

GitHub does not redeliver a failed delivery on its own. Its documented script ("Automatically
redelivering failed deliveries for a GitHub App webhook"): list ``GET /app/hook/deliveries`` with the
App's JWT, newest first, back to where the last run stopped; group the attempts by ``guid`` (constant
across redeliveries of one delivery); for every guid none of whose attempts has ``status == "OK"``,
redeliver one attempt with ``POST /app/hook/deliveries/{id}/attempts``. We redeliver the newest failed
attempt, look back at most 3 days, and keep a watermark (``function.store.sweep_state``) so that no failed
attempt is ever redelivered twice, by the schedule or by ``blog-api redeliver``.

A push GitHub could not hand over at all (413: over Lambda's 6 MB payload limit, or no answer) would
fail the same way when redelivered: the scheduled sweep instead reads the attempt's request payload
(``GET /app/hook/deliveries/{id}``) and runs the worker on that push itself, a full scan of the
repository the user is pinned to, so the push lands however large its delivery was.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from function.aws.deadline import UNLIMITED, Deadline
from function.errors import RedeliveryRefused
from function.observability.metrics import MetricsSink, NullMetrics, count
from function.store.records import Watermark
from shared import metric_names
from shared.names import SCHEDULED_REDELIVERY_KIND

if TYPE_CHECKING:
    # Only for types: /events imports this module, and the accept path shares its cold start, which must
    # not pay for urllib3 and the JWT stack. The sweep imports the client when it runs.
    from function.github.hook_deliveries import HookDeliveriesApi, HookDelivery
    from function.services import Services

log = logging.getLogger(__name__)

# GitHub keeps App hook deliveries for redelivery only this long.
MAX_WINDOW = timedelta(days=3)
DEFAULT_WINDOW = timedelta(hours=24)
# A delivery our endpoint refuses every time (say a 4xx) would otherwise be redelivered once per sweep
# for ever: after this many redeliveries inside the window, the sweep gives up on it and logs so.
MAX_REDELIVERIES = 3


@dataclass(frozen=True)
class Decision:
    """What the sweep does about one guid that has no successful attempt."""

    attempt: HookDelivery  # the guid's newest attempt
    verdict: str  # "redeliver" | "full sync" | "already handled" | "gave up"
    attempts: int


def plan(
    deliveries: list[HookDelivery],
    *,
    handled_up_to: int | None,
    max_redeliveries: int = MAX_REDELIVERIES,
    can_sync: bool = False,
) -> list[Decision]:
    """Group by guid; for each guid with no ``OK`` attempt, decide about its newest attempt.

    An attempt at or below the watermark ``handled_up_to`` was decided by an earlier sweep (its
    redelivery, if any, is a newer attempt): nothing is done twice. With ``can_sync``, a push that
    never reached the function (413, no answer) is synced by the sweep instead of redelivered.
    """
    by_guid: dict[str, list[HookDelivery]] = {}
    for delivery in deliveries:
        by_guid.setdefault(delivery.guid, []).append(delivery)
    decisions: list[Decision] = []
    for attempts in by_guid.values():
        if any(a.ok for a in attempts):
            continue
        newest = max(attempts, key=lambda a: (a.delivered_at, a.id))
        if handled_up_to is not None and newest.id <= handled_up_to:
            verdict = "already handled"
        elif can_sync and newest.never_reached_us:
            verdict = "full sync"
        elif sum(a.redelivery for a in attempts) >= max_redeliveries:
            verdict = "gave up"
        else:
            verdict = "redeliver"
        decisions.append(Decision(newest, verdict, len(attempts)))
    return decisions


@dataclass
class SweepReport:
    since: datetime
    dry_run: bool
    fetched: int = 0
    pages: int = 0
    guids: int = 0
    decisions: list[Decision] = field(default_factory=list)
    redelivered: list[HookDelivery] = field(default_factory=list)
    synced: list[tuple[HookDelivery, str]] = field(default_factory=list)  # (attempt, outcome)
    errors: list[tuple[HookDelivery, str]] = field(default_factory=list)
    watermark: Watermark | None = None  # saved after this sweep (None: unchanged)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": "swept",
            "since": self.since.isoformat(),
            "dryRun": self.dry_run,
            "fetched": self.fetched,
            "guids": self.guids,
            "redelivered": [d.id for d in self.redelivered],
            "synced": [{"id": d.id, "outcome": outcome} for d, outcome in self.synced],
            "alreadyHandled": sum(d.verdict == "already handled" for d in self.decisions),
            "gaveUp": sum(d.verdict == "gave up" for d in self.decisions),
            "errors": [{"id": d.id, "error": message} for d, message in self.errors],
        }


class WatermarkStore(Protocol):
    def load(self) -> Watermark | None: ...
    def save(self, mark: Watermark) -> None: ...


def window_start(
    now: datetime, window: timedelta, previous: Watermark | None, *, catch_up: bool = False
) -> datetime:
    """``now - window`` (at most 3 days back). With ``catch_up``, after a pause longer than the window,
    back to where the last sweep stopped, still at most 3 days back."""
    window = min(window, MAX_WINDOW)
    since = now - window
    if catch_up and previous is not None:
        stopped = previous.delivered_at.replace(tzinfo=UTC)
        since = min(since, max(stopped, now - MAX_WINDOW))
    return since


def sweep(
    api: HookDeliveriesApi,
    state: WatermarkStore | None,
    *,
    now: datetime,
    window: timedelta = DEFAULT_WINDOW,
    dry_run: bool = False,
    catch_up: bool = False,
    metrics: MetricsSink | None = None,
    full_sync: FullSync | None = None,
) -> SweepReport:
    """List, decide, redeliver (unless ``dry_run``) and move the watermark (unless ``dry_run``).

    A redelivery GitHub refuses is reported, and the watermark stays below that attempt so the next
    sweep tries it again. With ``full_sync``, a push that never reached the function is handed to it
    instead of redelivered; one that fails (or leaves files for later) is an error the same way.
    """
    previous = state.load() if state is not None else None
    report = SweepReport(since=window_start(now, window, previous, catch_up=catch_up), dry_run=dry_run)
    from function.github.hook_deliveries import fetch_since

    deliveries, report.pages = fetch_since(api, report.since)
    report.fetched = len(deliveries)
    report.guids = len({d.guid for d in deliveries})
    report.decisions = plan(
        deliveries, handled_up_to=previous.delivery_id if previous else None, can_sync=full_sync is not None
    )
    for decision in report.decisions:
        if decision.verdict not in ("redeliver", "full sync") or dry_run:
            continue
        attempt = decision.attempt
        if decision.verdict == "full sync":
            assert full_sync is not None  # plan() chose it only with one
            _sync_instead(full_sync, attempt, report)
            continue
        try:
            api.redeliver(attempt.id)
        except RedeliveryRefused as exc:
            report.errors.append((attempt, str(exc)))
            log.warning(
                "Redelivery refused",
                extra={"delivery": attempt.guid, "hook_delivery_id": attempt.id, "error": str(exc)},
            )
            continue
        report.redelivered.append(attempt)
        log.info(
            "Redelivered GitHub webhook",
            extra={
                "delivery": attempt.guid,
                "hook_delivery_id": attempt.id,
                "event": attempt.event,
                "status": attempt.status,
            },
        )
    if not dry_run:
        (metrics or NullMetrics()).put(
            {
                metric_names.REDELIVERIES: count(len(report.redelivered)),
                metric_names.REDELIVERY_ERRORS: count(len(report.errors)),
            }
        )
    if not dry_run and state is not None and deliveries:
        report.watermark = _next_watermark(deliveries, report.errors, now, previous)
        state.save(report.watermark)
    return report


@dataclass
class HeldReport:
    """What ``redeliver_held`` did: the attempts GitHub redelivered, the held deliveries it has no
    attempt of in the window (too old, or not from the App), and the redeliveries it refused."""

    redelivered: list[HookDelivery] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    errors: list[tuple[HookDelivery, str]] = field(default_factory=list)


def redeliver_held(
    api: HookDeliveriesApi, guids: Collection[str], since: datetime, *, dry_run: bool = False
) -> HeldReport:
    """Ask GitHub to redeliver each delivery held by the safety valve (its newest attempt since
    ``since``): GitHub answered them 2xx, so the sweep never would. Their users' confirmation is the
    caller's to record first, so the redelivered push carries the removal out."""
    from function.github.hook_deliveries import fetch_since

    report = HeldReport()
    attempts, _ = fetch_since(api, since)
    newest: dict[str, HookDelivery] = {}
    for attempt in attempts:
        if attempt.guid in guids and (
            attempt.guid not in newest
            or (attempt.delivered_at, attempt.id)
            > (newest[attempt.guid].delivered_at, newest[attempt.guid].id)
        ):
            newest[attempt.guid] = attempt
    report.not_found = sorted(set(guids) - set(newest))
    for guid in sorted(newest):
        attempt = newest[guid]
        if dry_run:
            report.redelivered.append(attempt)
            continue
        try:
            api.redeliver(attempt.id)
        except RedeliveryRefused as exc:
            report.errors.append((attempt, str(exc)))
            continue
        report.redelivered.append(attempt)
        log.info("Redelivered a held delivery", extra={"delivery": guid, "hook_delivery_id": attempt.id})
    return report


# Syncs the push of a hook delivery attempt that never reached the function; returns the outcome
# ("success", "partial", "skipped"), raises when the sync should be tried again by the next sweep.
FullSync = Callable[["HookDelivery"], str]


def _sync_instead(full_sync: FullSync, attempt: HookDelivery, report: SweepReport) -> None:
    fields = {"delivery": attempt.guid, "hook_delivery_id": attempt.id, "status_code": attempt.status_code}
    try:
        outcome = full_sync(attempt)
    except Exception as exc:  # noqa: BLE001 - any failure leaves the attempt for the next sweep
        message = f"full sync failed: {type(exc).__name__}: {exc}"[:500]
        report.errors.append((attempt, message))
        log.warning("Full sync for an undeliverable push failed", extra={**fields, "error": message})
        return
    report.synced.append((attempt, outcome))
    log.info("Synced an undeliverable push instead of redelivering it", extra={**fields, "outcome": outcome})


def _next_watermark(
    deliveries: list[HookDelivery],
    errors: list[tuple[HookDelivery, str]],
    now: datetime,
    previous: Watermark | None,
) -> Watermark:
    newest = max(deliveries, key=lambda d: d.id)
    if errors:
        # Stay below the first refused attempt so the next sweep tries it again. An attempt above it
        # that was redelivered now is by then superseded by its own newer attempt.
        oldest_refused = min(errors, key=lambda e: e[0].id)[0]
        below = [d for d in deliveries if d.id < oldest_refused.id]
        if not below:
            floor_id = previous.delivery_id if previous else oldest_refused.id - 1
            floor_at = previous.delivered_at if previous else oldest_refused.delivered_at
            return Watermark(floor_id, _naive(floor_at), _naive(now))
        newest = max(below, key=lambda d: d.id)
    return Watermark(newest.id, _naive(newest.delivered_at), _naive(now))


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


# -- wiring ---------------------------------------------------------------------------------------


def is_scheduled_event(raw: bytes) -> bool:
    """True for the schedule's constant input ``{"kind": "scheduled-redelivery"}``; an envelope's kind is
    always one of its own."""
    if len(raw) > 1024:
        return False
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("kind") == SCHEDULED_REDELIVERY_KIND


def run_scheduled(
    services: Services, metrics: MetricsSink, now: datetime | None = None, *, deadline: Deadline = UNLIMITED
) -> SweepReport:
    """The schedule's sweep inside the function: the default window, the watermark in the database;
    pushes too large for Lambda are synced here, within ``deadline``. First, the outgoing webhooks
    that are due (retries, and anything left) are sent: they need no GitHub App; then the stored images
    nothing needs any more are deleted (``function.assets.sweep``), and the delivery records older than
    ``DELIVERY_RETENTION_DAYS`` (``function.worker.retention``)."""
    from function.assets.sweep import collect_unused_images
    from function.github.hook_deliveries import api_from_settings
    from function.worker.retention import forget_old_deliveries_of

    send_due_webhooks(services, deadline)
    collect_unused_images(services, now or datetime.now(UTC))
    forget_old_deliveries_of(services, now or datetime.now(UTC), deadline)
    api, http = api_from_settings(services.settings)
    try:
        with services.store() as store:
            report = sweep(
                api,
                store.sweep_state(),
                now=now or datetime.now(UTC),
                catch_up=True,
                metrics=metrics,
                full_sync=lambda attempt: sync_undelivered_push(services, api, attempt, deadline),
            )
    finally:
        http.close()
    log.info(
        "Redelivery sweep complete",
        extra={
            "fetched": report.fetched,
            "redelivered": len(report.redelivered),
            "errors": len(report.errors),
            "since": report.since.isoformat(),
        },
    )
    return report


def send_due_webhooks(services: Services, deadline: Deadline = UNLIMITED) -> None:
    """The sweep's part for the outgoing webhooks: whatever is due, within ``deadline``; a failure is
    logged and left for the next sweep, and never stops the redelivery sweep."""
    try:
        with services.store() as store:
            report = services.hooks(store).deliver_due(deadline)
    except Exception as exc:  # noqa: BLE001 - the redelivery sweep still runs
        log.error("Due webhooks not sent", extra={"error": f"{type(exc).__name__}: {exc}"[:300]})
        return
    if report.sent:
        log.info("Due webhooks sent", extra=report.to_json())


def sync_undelivered_push(
    services: Services, api: HookDeliveriesApi, attempt: HookDelivery, deadline: Deadline = UNLIMITED
) -> str:
    """Run the worker on the push an attempt carried, read back from GitHub's delivery record: the user
    pinned to its repository is synced (a full scan of the tree, as every sync is), under the attempt's
    guid, so ``blog-api deliveries`` shows it. Raises when the sync should be tried again."""
    from function.webhooks.push import DeliveryInfo, Skip, classify_push

    payload = api.request_payload(attempt.id)
    push = classify_push(payload, services.settings.article_branch)
    if isinstance(push, Skip):
        log.info("Undeliverable push needs no sync", extra={"delivery": attempt.guid, "reason": push.reason})
        return "skipped"
    info = DeliveryInfo(delivery_id=attempt.guid, event="push", received_at=_naive(attempt.delivered_at))
    try:
        with services.store() as store:
            summary = services.worker(store).process_push(info, push, deadline=deadline)
    except Exception as exc:
        services.after_sync(
            exc, installation_id=push.installation_id, delivery=attempt.guid, deadline=deadline
        )
        raise
    services.after_sync(
        summary, installation_id=push.installation_id, delivery=attempt.guid, deadline=deadline
    )
    if summary.retryable:
        left = f", {len(summary.left)} files left for the next run" if summary.left else ""
        raise RedeliveryRefused(f"{summary.failed} files failed{left}")
    return str(summary.outcome)


def iter_lines(report: SweepReport) -> Iterator[str]:
    """Human-readable lines for ``blog-api redeliver``."""
    for decision in report.decisions:
        a = decision.attempt
        what = {
            "redeliver": "would redeliver" if report.dry_run else "redelivered",
            "full sync": "would sync instead" if report.dry_run else "synced instead",
            "already handled": "already handled",
            "gave up": f"gave up after {MAX_REDELIVERIES} redeliveries",
        }[decision.verdict]
        if any(e[0].id == a.id for e in report.errors):
            what = "refused: " + next(m for e, m in report.errors if e.id == a.id)
        yield (
            f"{what}\tid={a.id}\tguid={a.guid}\tevent={a.event}\tstatus={a.status!r}"
            f"\tdelivered_at={a.delivered_at.isoformat()}\tattempts={decision.attempts}"
        )
