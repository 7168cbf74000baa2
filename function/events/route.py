"""The pass-through route (``POST /events``): the worker's entry for self-invoked envelopes."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from flask import Blueprint, request

from function.aws.deadline import UNLIMITED
from function.errors import BlogApiError, Forbidden, Unavailable
from function.events.run import log_complete, run_push
from function.web import pass_through, services
from function.webhooks import envelope
from function.webhooks.push import Skip, push_of_envelope
from function.worker import installations, maintenance, redelivery

if TYPE_CHECKING:
    from function.services import Services

log = logging.getLogger(__name__)


def make_blueprint(path: str) -> Blueprint:
    blueprint = Blueprint("events", __name__)

    @blueprint.post(path)
    def receive_event() -> tuple[dict[str, Any], int]:
        svc = services()
        settings = svc.settings
        passed = pass_through()  # None for a request that came over HTTP
        deadline = passed.deadline if passed else UNLIMITED
        # Defence in depth: on Lambda, only the handler's pass-through reaches this route; an HTTP
        # request for it from API Gateway is refused even with a valid signature.
        if settings.lambda_mode and passed is None:
            raise Forbidden(f"{path} only accepts events passed through by the function itself")
        raw = request.get_data(cache=True)
        maintenance_event = maintenance.maintenance_event(raw)
        if maintenance_event is not None:
            # As the sweep below: unsigned, so only a direct invocation of the function may run it.
            if passed is None:
                raise Forbidden(
                    f"{maintenance_event['kind']} only runs from a direct invocation of the function"
                )
            return maintenance.run(svc, maintenance_event), 200
        if redelivery.is_scheduled_event(raw):
            # The schedule's input carries no signature: only the function's own pass-through may run
            # it (inline mode serves this route over HTTP, so the marker is checked here too).
            if passed is None:
                raise Forbidden("the redelivery sweep only runs from the function's schedule")
            report = redelivery.run_scheduled(svc, svc.metrics(), deadline=deadline)
            return report.to_json(), 200
        env = envelope.parse_and_verify(settings.webhook_secret, raw)
        push = push_of_envelope(env, settings.article_branch)
        if isinstance(push, Skip):
            return _finish_here(svc, env, push.reason)
        summary = run_push(svc, env.delivery, env.event, env.received_at, push, deadline=deadline)
        if summary.left:
            # The time budget ran out: what was read is committed; the retry reads only the rest.
            raise Unavailable(
                f"time budget reached: {len(summary.left)} changed files left for the next run; "
                "the delivery will be retried"
            )
        if summary.retryable:
            # Committed what could be; answer 5xx so Lambda retries and fetches only what failed.
            raise Unavailable(
                f"{summary.failed} of {summary.processed} articles failed to fetch; "
                "the delivery will be retried"
            )
        return summary.to_json(), 200

    return blueprint


def _finish_here(svc: Services, env: envelope.Envelope, skip_reason: str) -> tuple[dict[str, Any], int]:
    """A delivery that is not a sync ends here, with its completion line: an installation event is
    applied, anything else skipped."""
    started = time.perf_counter()
    try:
        if env.event in installations.EVENTS:
            answer, status = installations.apply_envelope(svc, env)
        else:
            answer, status = {"status": "skipped", "reason": skip_reason}, 200
    except BlogApiError as exc:
        log_complete(env.delivery, started, "rejected", status=exc.status, error=exc.code)
        raise
    log_complete(env.delivery, started, str(answer.get("status", "")), status=status)
    return answer, status
