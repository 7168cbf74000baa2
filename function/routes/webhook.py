"""``POST /webhooks/github``: verify, decide, hand off, answer — within milliseconds in Lambda mode."""

from __future__ import annotations

import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, request

from function import envelope, installations, metrics, signature
from function.delivery import Skip, classify_push, decode_payload
from function.errors import BadRequest
from function.invoker import PayloadTooLarge
from function.routes import services
from function.routes.processing import run_push
from shared.names import WEBHOOK_ROUTE

log = logging.getLogger(__name__)
blueprint = Blueprint("webhook", __name__)


def _header(name: str, limit: int = 200) -> str | None:
    value = request.headers.get(name)
    return value[:limit] if value is not None else None


@blueprint.post(WEBHOOK_ROUTE)
def receive() -> tuple[dict[str, Any], int]:
    started = time.perf_counter()
    svc = services()
    settings = svc.settings
    body = request.get_data(cache=True)
    # The signature is checked over the raw bytes before anything else is parsed.
    sig = request.headers.get("X-Hub-Signature-256")
    signature.verify(settings.webhook_secret, body, sig)

    event = _header("X-GitHub-Event", 64)  # the deliveries table keeps 64
    if not event:
        raise BadRequest("X-GitHub-Event header is missing")
    # Without GitHub's id, make one up: a shared placeholder would make later deliveries "duplicates".
    delivery = _header("X-GitHub-Delivery", 100) or f"no-id-{uuid.uuid4()}"
    received_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    payload = decode_payload(body, request.content_type)
    log.info("Received GitHub webhook", extra={"delivery": delivery, "event": event, "bytes": len(body)})

    if event == "ping":
        return {"status": "pong"}, 200
    if event in installations.EVENTS:
        return installations.accept(svc, event, delivery, sig or "", body, payload, received_at)
    if event != "push":
        return {"status": "skipped", "reason": f"event {event!r} is not handled"}, 200

    decision = classify_push(payload, settings.article_branch)
    if isinstance(decision, Skip):
        log.info("Skipped GitHub webhook", extra={"delivery": delivery, "reason": decision.reason})
        return {"status": "skipped", "reason": decision.reason}, 200

    invoker = svc.invoker()
    if invoker is None:
        # Inline mode (local development): process inside the request.
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
