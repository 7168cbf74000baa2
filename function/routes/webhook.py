"""``POST /webhooks/github``: verify, decide, hand off, answer — within milliseconds in Lambda mode."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, request

from function import envelope, installations, metrics, signature
from function.delivery import Skip, classify_push, decode_payload
from function.errors import BadRequest, BlogApiError
from function.invoker import PayloadTooLarge
from function.logs import RECEIVED_MESSAGE
from function.routes import services
from function.routes.processing import log_complete, run_push
from shared.names import WEBHOOK_ROUTE

log = logging.getLogger(__name__)
blueprint = Blueprint("webhook", __name__)


def _header(name: str, limit: int = 200) -> str | None:
    value = request.headers.get(name)
    return value[:limit] if value is not None else None


@blueprint.post(WEBHOOK_ROUTE)
def receive() -> tuple[dict[str, Any], int]:
    """Every delivery, signed or not, logs ``Received GitHub webhook`` first and
    ``Webhook processing complete`` when it is done here; a push handed to the worker (inline or
    through the self-invoke) leaves the completion line to the worker, which logs it however it ends."""
    started = time.perf_counter()
    body = request.get_data(cache=True)
    event = _header("X-GitHub-Event", envelope.EVENT_MAX_CHARS)
    # Without GitHub's id, make one up: a shared placeholder would make later deliveries "duplicates".
    delivery = _header("X-GitHub-Delivery", envelope.DELIVERY_ID_MAX_CHARS) or f"no-id-{uuid.uuid4()}"
    log.info(RECEIVED_MESSAGE, extra={"delivery": delivery, "event": event, "bytes": len(body)})
    handed_off = False

    def hand_off() -> None:
        nonlocal handed_off
        handed_off = True

    try:
        answer, status = _receive(body, event, delivery, started, hand_off)
    except BlogApiError as exc:
        if not handed_off:
            log_complete(delivery, started, "rejected", status=exc.status, error=exc.code)
        raise
    except Exception as exc:
        if not handed_off:
            log_complete(delivery, started, "failed", level=logging.ERROR, error_type=type(exc).__name__)
        raise
    if not handed_off:
        log_complete(delivery, started, str(answer.get("status", "")), status=status)
    return answer, status


def _receive(
    body: bytes, event: str | None, delivery: str, started: float, hand_off: Callable[[], None]
) -> tuple[dict[str, Any], int]:
    svc = services()
    settings = svc.settings
    # The signature is checked over the raw bytes before anything else is parsed.
    sig = request.headers.get("X-Hub-Signature-256")
    signature.verify(settings.webhook_secret, body, sig)
    if not event:
        raise BadRequest("X-GitHub-Event header is missing")
    received_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    payload = decode_payload(body, request.content_type)

    if event == "ping":
        return {"status": "pong"}, 200
    if event in installations.EVENTS:
        answer, status = installations.accept(svc, event, delivery, sig or "", body, payload, received_at)
        if status == 202:
            hand_off()  # the worker applies it and logs its completion
        return answer, status
    if event != "push":
        return {"status": "skipped", "reason": f"event {event!r} is not handled"}, 200

    decision = classify_push(payload, settings.article_branch)
    if isinstance(decision, Skip):
        log.info("Skipped GitHub webhook", extra={"delivery": delivery, "reason": decision.reason})
        return {"status": "skipped", "reason": decision.reason}, 200

    invoker = svc.invoker()
    if invoker is None:
        # Inline mode (local development): process inside the request.
        hand_off()
        summary = run_push(delivery, event, received_at, decision)
        return summary.to_json(), 200

    payload_bytes = envelope.build(
        secret=settings.webhook_secret,
        event=event,
        delivery=delivery,
        signature_header=sig or "",
        body=body,
        push=decision,
        received_at=received_at,
    )
    try:
        invoker.invoke(payload_bytes)
    except PayloadTooLarge:
        if envelope.is_compact(payload_bytes):
            raise
        # Our size estimate was beaten (Lambda counts differently): the compact form always fits.
        compact = envelope.build_compact(
            secret=settings.webhook_secret,
            event=event,
            delivery=delivery,
            push=decision,
            received_at=received_at,
        )
        invoker.invoke(compact)
    hand_off()  # queued: the worker's run logs the completion
    accept_ms = round((time.perf_counter() - started) * 1000, 2)
    log.info(
        "Queued GitHub webhook",
        extra={
            "delivery": delivery,
            "compact": envelope.is_compact(payload_bytes),
            "accept_ms": accept_ms,
        },
    )
    metrics.record_accept(accept_ms, delivery)
    return {"status": "accepted", "message": "Queued for async processing"}, 202
