"""``POST /webhooks/github``: verify, decide, hand off, answer — within milliseconds in Lambda mode."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, after_this_request, request

from function.errors import BadRequest, BlogApiError
from function.events.run import log_complete, run_push
from function.observability import metrics
from function.observability.logs import RECEIVED_MESSAGE
from function.receiver import installation_events
from function.receiver.handoff import hand_off
from function.web import services
from function.webhooks import envelope, signature
from function.webhooks.envelope import PushRef
from function.webhooks.push import Skip, classify_push, decode_payload
from function.worker import installations
from shared.names import WEBHOOK_ROUTE

if TYPE_CHECKING:
    from function.services import Services

log = logging.getLogger(__name__)
blueprint = Blueprint("webhook", __name__)


def _header(name: str, limit: int = 200) -> str | None:
    value = request.headers.get(name)
    return value[:limit] if value is not None else None


def _delivery_id(header: str | None) -> str:
    """GitHub's delivery id, a UUID; BadRequest for anything else, before it is logged or stored. The
    header is not signed: it could carry escape sequences into a terminal or tabs into a report."""
    if not header:
        return f"no-id-{uuid.uuid4()}"
    try:
        uuid.UUID(header)
    except ValueError:
        raise BadRequest("X-GitHub-Delivery must be GitHub's delivery id, a UUID") from None
    if len(header) != 36:  # uuid.UUID also takes braces, "urn:uuid:" and no hyphens
        raise BadRequest("X-GitHub-Delivery must be GitHub's delivery id, a UUID")
    return header


@dataclass(frozen=True)
class _ProcessInline:
    """Inline mode's answer to a push: process it inside the request."""

    event: str
    push: PushRef
    received_at: str


@blueprint.post(WEBHOOK_ROUTE)
def receive() -> tuple[dict[str, Any], int]:
    """Every signed delivery logs ``Received GitHub webhook`` first and one
    ``Webhook processing complete`` when it is done. The worker logs the completion of what it runs: a
    push processed inline, and whatever was handed to it through the self-invoke (answered 202)."""
    started = time.perf_counter()
    svc = services()  # read once here, passed down
    body = request.get_data(cache=True)
    event = _header("X-GitHub-Event", envelope.EVENT_MAX_CHARS)
    # Without GitHub's id, make one up: a shared placeholder would make later deliveries "duplicates".
    delivery = _delivery_id(request.headers.get("X-GitHub-Delivery"))
    try:
        # The signature is checked over the raw bytes before anything else is parsed. A POST that
        # fails it is no delivery: it logs its own outcome and neither delivery line, so
        # `blog-api logs durations` counts only what GitHub (or whoever holds the secret) sent.
        signature.verify(svc.settings.webhook_secret, body, request.headers.get("X-Hub-Signature-256"))
    except BlogApiError as exc:
        log.warning(
            "Rejected unsigned webhook",
            extra={"delivery": delivery, "status": exc.status, "error": exc.code, "bytes": len(body)},
        )
        raise
    log.info(RECEIVED_MESSAGE, extra={"delivery": delivery, "event": event, "bytes": len(body)})
    try:
        outcome = _receive(svc, body, event, delivery, started)
    except BlogApiError as exc:
        log_complete(delivery, started, "rejected", status=exc.status, error=exc.code)
        raise
    except Exception as exc:
        log_complete(delivery, started, "failed", level=logging.ERROR, error_type=type(exc).__name__)
        raise
    if isinstance(outcome, _ProcessInline):
        summary = run_push(
            svc, delivery, outcome.event, outcome.received_at, outcome.push, later=_after_the_answer
        )
        return summary.to_json(), 200
    answer, status = outcome
    if status != 202:
        log_complete(delivery, started, str(answer.get("status", "")), status=status)
    return answer, status


def _after_the_answer(work: Callable[[], None]) -> None:
    """Inline mode: run ``work`` (the outgoing webhooks) once the answer has been sent, so GitHub never
    waits for a front end."""

    @after_this_request
    def _register(response: Response) -> Response:
        response.call_on_close(work)
        return response


def _receive(
    svc: Services, body: bytes, event: str | None, delivery: str, started: float
) -> tuple[dict[str, Any], int] | _ProcessInline:
    settings = svc.settings
    sig = request.headers.get("X-Hub-Signature-256")  # verified by receive()
    if not event:
        raise BadRequest("X-GitHub-Event header is missing")
    received_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    payload = decode_payload(body, request.content_type)

    if event == "ping":
        return {"status": "pong"}, 200
    if event in installations.EVENTS:
        return installation_events.accept(svc, event, delivery, sig or "", body, payload, received_at)
    if event != "push":
        return {"status": "skipped", "reason": f"event {event!r} is not handled"}, 200

    decision = classify_push(payload, settings.article_branch)
    if isinstance(decision, Skip):
        log.info("Skipped GitHub webhook", extra={"delivery": delivery, "reason": decision.reason})
        return {"status": "skipped", "reason": decision.reason}, 200

    invoker = svc.invoker()
    if invoker is None:
        # Inline mode (local development): process inside the request.
        return _ProcessInline(event, decision, received_at)

    compact = hand_off(
        svc,
        event=event,
        delivery=delivery,
        signature_header=sig or "",
        body=body,
        received_at=received_at,
        push=decision,
    )
    accept_ms = round((time.perf_counter() - started) * 1000, 2)
    log.info(
        "Queued GitHub webhook",
        extra={
            "delivery": delivery,
            "compact": compact,
            "accept_ms": accept_ms,
        },
    )
    metrics.record_accept(svc.metrics(), accept_ms, delivery)
    return {"status": "accepted", "message": "Queued for async processing"}, 202
