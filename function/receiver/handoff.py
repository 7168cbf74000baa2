"""The one hand-off to the worker: a verified delivery, queued by invoking our own function.

Pushes and installation events travel the same way: GitHub's signed body in the standard envelope, so
``/events`` can verify it again. A push whose envelope would not fit Lambda's asynchronous payload limit
goes in the compact form, which carries only what the worker needs; an installation event has no
compact form (its payload is a few KB), so one that does not fit is refused.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from function.errors import PayloadTooLarge
from function.webhooks import envelope
from function.webhooks.envelope import PushRef

if TYPE_CHECKING:
    from function.aws.invoker import SelfInvoker
    from function.settings import Settings

log = logging.getLogger(__name__)


class TooLargeToForward(Exception):
    """A delivery with no compact form does not fit the self-invoke."""


class HandOffServices(Protocol):
    """What the hand-off needs of ``function.services.Services``: the secret and the self-invoker."""

    settings: Settings

    def invoker(self) -> SelfInvoker | None: ...


def hand_off(
    svc: HandOffServices,
    *,
    event: str,
    delivery: str,
    signature_header: str,
    body: bytes,
    received_at: str,
    push: PushRef | None = None,
    installation_id: int | None = None,
) -> bool:
    """Queue the delivery for the worker through the self-invoke. Returns whether the compact form was
    sent. Raises TooLargeToForward for a non-push that does not fit, Unavailable when the invoke fails."""
    invoker = svc.invoker()
    if invoker is None:
        raise RuntimeError("hand_off runs in Lambda mode only: inline mode has no self-invoker")
    secret = svc.settings.webhook_secret
    # The standard envelope names the push it carries; a non-push carries a placeholder that is never
    # read (the worker reads the event's own body).
    ref = push or PushRef(repository="", branch="", installation_id=installation_id or 0)
    payload = envelope.build(
        secret=secret,
        event=event,
        delivery=delivery,
        signature_header=signature_header,
        body=body,
        push=ref,
        received_at=received_at,
    )
    compact = envelope.is_compact(payload)
    if compact and push is None:
        raise TooLargeToForward(f"{event} delivery of {len(body)} bytes does not fit the self-invoke")
    try:
        invoker.invoke(payload)
    except PayloadTooLarge:
        if compact or push is None:
            raise
        # Our size estimate was beaten (Lambda counts differently): the compact form always fits.
        compact = True
        invoker.invoke(
            envelope.build_compact(
                secret=secret, event=event, delivery=delivery, push=push, received_at=received_at
            )
        )
    return compact
