"""Telling HTTP events from the rest, and posting the rest to the pass-through route."""

from __future__ import annotations

import json
import logging
from typing import Any

from function.aws.deadline import Deadline
from function.errors import PassThroughFailed

log = logging.getLogger(__name__)

# Set in the WSGI environ by function.handler for events that came through the pass-through path.
# An HTTP request cannot set it: headers arrive as HTTP_* keys, never as this one.
PASS_THROUGH_ENVIRON_KEY = "blog_api.pass_through"  # noqa: S105 - a WSGI environ key, not a secret
# The invocation's Deadline (from the Lambda context), for the route to hand to the worker. Same origin
# as the key above: only this process's own pass-through can set it.
DEADLINE_ENVIRON_KEY = "blog_api.deadline"


def is_http_event(event: Any) -> bool:
    """API Gateway REST (v1), HTTP API (v2), Function URL and ALB events all carry these marks."""
    if not isinstance(event, dict):
        return False
    context = event.get("requestContext")
    if not isinstance(context, dict):
        return False
    return "httpMethod" in event or "http" in context or "elb" in context


def dispatch(app: Any, event: Any, context: Any) -> Any:
    if is_http_event(event):
        import serverless_wsgi

        try:
            return serverless_wsgi.handle_request(app, event, context)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # serverless-wsgi builds the WSGI environ without checking the event (no headers, a body
            # that is not base64...); the app itself answers every error, so what escapes is the
            # event's shape. Raising would make Lambda retry an event that can never succeed.
            log.warning("Malformed HTTP event", extra={"error_type": type(exc).__name__})
            return _bad_http_event()
    return post_to_pass_through(app, event, Deadline.from_lambda_context(context))


def _bad_http_event() -> dict[str, Any]:
    body = {"error": "BAD_REQUEST", "message": "the HTTP event could not be read"}
    return {"statusCode": 400, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}


def post_to_pass_through(app: Any, event: Any, deadline: Deadline | None = None) -> dict[str, Any]:
    """POST ``event`` as JSON to the pass-through path inside this process; raise on a 5xx answer.
    ``deadline`` (the invocation's end) travels in the request's environ, for the worker."""
    environ: dict[str, Any] = {PASS_THROUGH_ENVIRON_KEY: True}
    if deadline is not None:
        environ[DEADLINE_ENVIRON_KEY] = deadline
    path = app.extensions["blog_api"].settings.pass_through_path
    body = event if isinstance(event, bytes | bytearray) else json.dumps(event).encode()
    client = app.test_client()
    answer = client.post(
        path,
        data=body,
        content_type="application/json",
        environ_overrides=environ,
    )
    text = answer.get_data(as_text=True)
    if answer.status_code >= 500:
        raise PassThroughFailed(f"{path} answered {answer.status_code}: {text[:500]}")
    if answer.status_code >= 400:
        # Permanent: returning normally stops Lambda from retrying what can never succeed.
        log.warning("Event rejected", extra={"status_code": answer.status_code, "body": text[:500]})
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text
    return {"statusCode": answer.status_code, "body": parsed}
