"""Installation events on the accept path: parsed and handed to the worker like a push (applied in the
request in inline mode), without touching the database in Lambda mode."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from function.receiver.handoff import HandOffServices, TooLargeToForward, hand_off
from function.worker.installations import InstallationServices, apply_in, parse, set_installation_command

log = logging.getLogger(__name__)


class AcceptServices(HandOffServices, InstallationServices, Protocol):
    """What the accept path's installation events need: the hand-off, or applying them inline."""


def accept(
    svc: AcceptServices,
    event: str,
    delivery: str,
    signature_header: str,
    body: bytes,
    payload: object,
    received_at: str,
) -> tuple[dict[str, Any], int]:
    """The webhook route's part: apply in inline mode; in Lambda mode forward GitHub's signed body in
    the standard envelope, exactly as a push is forwarded, without touching the database."""
    change = parse(event, payload)
    if change.effect == "none":
        return {"status": "skipped", "reason": f"{event} action {change.action!r} changes no user"}, 200
    if svc.invoker() is None:
        return apply_in(svc, change, delivery), 200
    try:
        hand_off(
            svc,
            event=event,
            delivery=delivery,
            signature_header=signature_header,
            body=body,
            received_at=received_at,
            installation_id=change.installation_id,
        )
    except TooLargeToForward:
        log.error(
            "Installation event too large to forward",
            extra={
                "delivery": delivery,
                "bytes": len(body),
                "fix": set_installation_command(change.installation_id),
            },
        )
        return {"status": "skipped", "reason": "installation event too large to forward"}, 200
    log.info("Queued GitHub webhook", extra={"delivery": delivery, "event": event})
    return {"status": "accepted", "message": "Queued for async processing"}, 202
