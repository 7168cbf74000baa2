"""Queueing events for a user's endpoints, and sending what is due: signed, retried, recorded.

One sender per endpoint at a time (the store's lease). It sends the endpoint's due events in turn;
after a failure it waits in place for a retry due within seconds (the 5 s one) when the time budget
allows, and otherwise leaves the endpoint to the scheduled sweep, which sends whatever is due. Every
attempt is recorded; an endpoint that has answered no attempt with a 2xx for 3 days is disabled and
the alarm topic told (its events wait; a 2xx to ``blog-api hooks test`` enables it again).
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from function.aws.deadline import UNLIMITED, Deadline
from function.hooks import backoff, events
from function.hooks.alarm import AlarmNotifier, LogAlarm
from function.hooks.guard import parse_target
from function.hooks.signing import new_message_id, signed_headers
from function.hooks.transport import Answer, Transport
from function.ogp.images import OgpImages
from function.store.hook_records import NewAttempt
from function.store.reads import ArticleCard

log = logging.getLogger(__name__)

# Longer than any invocation (Lambda stops at 15 minutes): a lease outlives its holder only if that
# holder died, and then the endpoint waits at most this long.
LEASE = timedelta(minutes=15)
# Attempts one run makes at most, whatever its time budget (the CLI has none).
MAX_ATTEMPTS_PER_RUN = 100
# Time kept free after an attempt could take its whole time-out.
MARGIN_S = 1.0


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class HookTiming:
    """The clock that decides when attempts are due and disables endpoints, its ``sleep``, and the wall
    clock of each attempt's ``webhook-timestamp`` (always the real time: receivers check it)."""

    now: Callable[[], datetime] = utc_now
    sleep: Callable[[float], None] = time.sleep
    wall: Callable[[], float] = time.time


@dataclass(frozen=True)
class Sent:
    """One attempt as the caller sees it."""

    endpoint_id: str
    event_id: str
    event_type: str
    number: int
    answer: Answer
    state: str  # the event's state after it: delivered | pending | failed
    retry_at: datetime | None = None


@dataclass
class SendReport:
    sent: list[Sent] = field(default_factory=list)

    @property
    def delivered(self) -> int:
        return sum(s.answer.ok for s in self.sent)

    def to_json(self) -> dict[str, Any]:
        return {"attempts": len(self.sent), "delivered": self.delivered}


class HookDispatcher:
    """The outgoing webhooks of one job: ``store`` is a ``function.store.hooks.HookStore`` on the job's
    connection, ``transport`` posts (``function.hooks.transport.Transport``)."""

    def __init__(
        self,
        store: Any,
        transport: Transport,
        *,
        timing: HookTiming | None = None,
        rng: random.Random | None = None,
        alarm: AlarmNotifier | None = None,
        site_url: str | None = None,
        ogp: OgpImages | None = None,
    ) -> None:
        self._store = store
        self._ogp = ogp or OgpImages()
        self._transport = transport
        self._timing = timing or HookTiming()
        self._rng = rng or random.SystemRandom()
        self._alarm = alarm or LogAlarm()
        self._site_url = site_url

    @property
    def store(self) -> Any:
        """The endpoints' and events' store (what ``blog-api hooks`` lists and changes)."""
        return self._store

    # -- queueing --------------------------------------------------------------------------------

    def queue_changes(
        self,
        user_id: int,
        user_name: str,
        *,
        published: Sequence[str],
        updated: Sequence[str],
        unpublished: Sequence[str],
        head_sha: str | None,
        source: str | None = None,
        books: Mapping[str, Sequence[str]] | None = None,
        cards: Mapping[str, ArticleCard] | None = None,
    ) -> list[str]:
        """Queue ``articles.changed`` for the user's endpoints (merged into one that is still
        pending); returns the endpoints queued for. Nothing changed: nothing queued. ``books``: the
        Zenn books that changed, by kind. ``cards``: the articles' titles and thumbnails by slug, from
        which each entry's ``ogpUrl`` is made (as the read API makes it); None: no ``ogpUrl``."""
        if not (published or updated or unpublished or any((books or {}).values())):
            return []
        ogp_urls = None
        if cards is not None:
            ogp_urls = {
                slug: self._ogp.url(user=user_name, slug=slug, title=card.title, thumbnail=card.thumbnail)
                if (card := cards.get(slug)) is not None
                else ""
                for slug in (*published, *updated, *unpublished)
            }
        data = events.articles_changed(
            user_name,
            published=published,
            updated=updated,
            unpublished=unpublished,
            head_sha=head_sha,
            site_url=self._site_url,
            books=books,
            ogp_urls=ogp_urls,
        )
        return self._queue(user_id, events.ARTICLES_CHANGED, data, source)

    def queue_failure(
        self,
        user_id: int,
        user_name: str,
        *,
        delivery: str | None,
        head_sha: str | None,
        reason: str,
        failed_paths: Sequence[str] = (),
        left: int = 0,
    ) -> list[str]:
        """Queue ``sync.failed`` for the user's endpoints; returns the endpoints queued for."""
        data = events.sync_failed(
            user_name,
            delivery=delivery,
            head_sha=head_sha,
            reason=reason,
            failed_paths=failed_paths,
            left=left,
        )
        return self._queue(user_id, events.SYNC_FAILED, data, delivery)

    def _queue(self, user_id: int, event_type: str, data: dict[str, Any], source: str | None) -> list[str]:
        merger = events.MERGERS[event_type]
        merge = functools.partial(merger, site_url=self._site_url)
        queued = []
        for endpoint in self._store.endpoints_for(user_id, event_type):
            event = self._store.queue(
                endpoint.id,
                event_type,
                data,
                self._timing.now(),
                message_id=new_message_id(),
                merge=merge,
                source=source,
            )
            if event is not None:
                queued.append(endpoint.id)
        return queued

    # -- sending ---------------------------------------------------------------------------------

    def deliver(self, endpoint_ids: Iterable[str], deadline: Deadline = UNLIMITED) -> SendReport:
        """Send what is due to these endpoints, each by one sender at a time."""
        report = SendReport()
        for endpoint_id in dict.fromkeys(endpoint_ids):
            self._deliver_to(endpoint_id, deadline, report)
        return report

    def deliver_due(self, deadline: Deadline = UNLIMITED) -> SendReport:
        """The sweep: send what is due to every enabled endpoint (retries, and anything left)."""
        return self.deliver(self._store.due_endpoints(self._timing.now()), deadline)

    def _deliver_to(self, endpoint_id: str, deadline: Deadline, report: SendReport) -> None:
        # A change queued while this sender held the lease found it taken and left its event to us: so
        # after giving the lease back, look once more (the queueing committed before its claim failed).
        for _ in range(3):
            now = self._timing.now()
            until = now + LEASE
            if not self._store.claim(endpoint_id, now, until):
                return
            try:
                ended = self._drain(endpoint_id, deadline, report)
            finally:
                self._store.release(endpoint_id, until)
            if ended != "empty" or self._store.next_due(endpoint_id, self._timing.now()) is None:
                return

    def _drain(self, endpoint_id: str, deadline: Deadline, report: SendReport) -> str:
        """Send the endpoint's due events until none is left ("empty"), it fails ("failing") or the
        run must stop ("stopped")."""
        while True:
            if len(report.sent) >= MAX_ATTEMPTS_PER_RUN or not deadline.allows(self._attempt_s()):
                return "stopped"
            endpoint = self._store.endpoint(endpoint_id)
            if endpoint is None or endpoint.disabled_at is not None:
                return "stopped"
            event = self._store.next_due(endpoint_id, self._timing.now())
            if event is None:
                return "empty"
            sent = self._attempt(endpoint, event, schedule_retry=True)
            report.sent.append(sent)
            if sent.answer.ok:
                continue
            if sent.state != "pending" or sent.retry_at is None:
                return "failing"
            wait = max((sent.retry_at - self._timing.now()).total_seconds(), 0.0)
            if wait > backoff.WAIT_IN_PLACE_MAX.total_seconds() or not deadline.allows(
                wait + self._attempt_s()
            ):
                return "failing"
            self._timing.sleep(wait)

    def _attempt_s(self) -> float:
        """The time one more attempt may take, with a margin."""
        return self._transport.total_timeout_s + MARGIN_S

    def ping(self, endpoint_id: str) -> Sent | None:
        """Send a ``ping`` now, once (never retried); a 2xx enables a disabled endpoint again. None
        when there is no such endpoint."""
        endpoint = self._store.endpoint(endpoint_id)
        if endpoint is None:
            return None
        data = events.ping(endpoint.user_name, endpoint.id)
        event = self._store.queue(
            endpoint.id, events.PING, data, self._timing.now(), message_id=new_message_id()
        )
        if event is None:
            return None
        return self._attempt(endpoint, event, schedule_retry=False)

    def redeliver(self, event_id: str) -> Sent | None:
        """Send an event again now, under its message id; the event takes this attempt's outcome (one
        still waiting for a retry keeps waiting if it fails). None when there is no such event."""
        event = self._store.event(event_id)
        if event is None:
            return None
        endpoint = self._store.endpoint(event.endpoint_id)
        if endpoint is None:
            return None
        waiting = event.state in ("pending", "sending")
        keep = (event.next_attempt_at or self._timing.now()) if waiting else None
        return self._attempt(endpoint, event, schedule_retry=False, keep_retry_at=keep)

    def _attempt(
        self, endpoint: Any, event: Any, *, schedule_retry: bool, keep_retry_at: datetime | None = None
    ) -> Sent:
        self._store.mark_sending(event.id)
        started = self._timing.now()
        body = events.body(event.type, event.updated_at, event.data)
        headers = signed_headers(
            endpoint.secrets_at(started), event.message_id, int(self._timing.wall()), body
        )
        answer = self._transport.post(endpoint.url, headers, body)
        done = self._timing.now()
        number = event.attempts + 1
        retry_at = keep_retry_at
        if not answer.ok and schedule_retry:
            delay = backoff.retry_delay(number, self._rng)
            retry_at = done + delay if delay is not None else None
        attempt = NewAttempt(
            event_id=event.id,
            endpoint_id=endpoint.id,
            message_id=event.message_id,
            number=number,
            attempted_at=started,
            status_code=answer.status,
            ok=answer.ok,
            error=None if answer.ok else answer.describe(),
            duration_ms=answer.duration_ms,
            answer=answer.body.decode("utf-8", "replace") if answer.body else None,
        )
        state = self._store.finish_attempt(attempt, revision=event.revision, retry_at=retry_at, now=done)
        sent = Sent(
            endpoint.id, event.id, event.type, number, answer, state, retry_at if state == "pending" else None
        )
        _log_attempt(endpoint, event, sent)
        self._note_health(endpoint, answer, done)
        return sent

    def _note_health(self, endpoint: Any, answer: Answer, now: datetime) -> None:
        if answer.ok:
            if endpoint.failing_since is not None or endpoint.disabled_at is not None:
                self._store.mark_healthy(endpoint.id)
            return
        since = self._store.mark_failing(endpoint.id, now)
        if now - since < backoff.DISABLE_AFTER:
            return
        reason = f"no 2xx answer since {since.isoformat(timespec='seconds')} UTC; last: {answer.describe()}"
        if not self._store.disable(endpoint.id, now, reason):
            return
        origin = _origin(endpoint.url)
        log.warning(
            "Webhook endpoint disabled",
            extra={"endpoint": endpoint.id, "user": endpoint.user_name, "origin": origin, "reason": reason},
        )
        self._alarm.notify(
            f"blog-api: webhook endpoint {endpoint.id} disabled",
            f"The webhook endpoint {endpoint.id} of user {endpoint.user_name} ({origin}) has answered no "
            f"attempt with a 2xx for {backoff.DISABLE_AFTER.days} days ({reason}), so blog-api stopped "
            f"calling it; its events wait. Once the receiver works, `blog-api hooks test {endpoint.id}` "
            "sends a ping, and a 2xx enables the endpoint again and sends what waited.",
        )


def _origin(url: str) -> str:
    """What a log line or an alarm may say of a URL: scheme, host and port (a deploy hook's path is its
    secret)."""
    try:
        return parse_target(url).origin
    except Exception:  # noqa: BLE001 - an unparseable URL is named by nothing at all
        return "(invalid URL)"


def _log_attempt(endpoint: Any, event: Any, sent: Sent) -> None:
    answer = sent.answer
    log.log(
        logging.INFO if answer.ok else logging.WARNING,
        "Webhook attempt",
        extra={
            "endpoint": endpoint.id,
            "origin": _origin(endpoint.url),
            "event": event.id,
            "event_type": event.type,
            "webhook_id": event.message_id,
            "attempt": sent.number,
            "status": answer.status,
            "duration_ms": answer.duration_ms,
            "error": None if answer.ok else answer.describe(),
            "state": sent.state,
        },
    )
