"""Telling HTTP events from the rest, and posting the rest to the pass-through route."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from function.aws.deadline import UNLIMITED, Deadline
from function.errors import PassThroughFailed

if TYPE_CHECKING:
    from flask import Flask

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PassThrough:
    """What the handler hands the pass-through route along with an event: that the event came from
    the function itself (not over HTTP), and the invocation's deadline, for the worker. The delivery's
    own data (its id, its push) travels in the signed envelope, never here."""

    deadline: Deadline = UNLIMITED


# The one WSGI environ key that carries the ``PassThrough``. An HTTP request cannot set it: headers
# arrive as HTTP_* keys, never as this one, and only a Python object of this class is read from it.
PASS_THROUGH_ENVIRON_KEY = "blog_api.pass_through"  # noqa: S105 - a WSGI environ key, not a secret


def is_http_event(event: object) -> bool:
    """API Gateway REST (v1), HTTP API (v2), Function URL and ALB events all carry these marks."""
    if not isinstance(event, dict):
        return False
    context = event.get("requestContext")
    if not isinstance(context, dict):
        return False
    return "httpMethod" in event or "http" in context or "elb" in context


def dispatch(app: Flask, event: object, context: object) -> dict[str, Any]:
    if is_http_event(event):
        import serverless_wsgi

        try:
            answer: dict[str, Any] = serverless_wsgi.handle_request(app, event, context)
            return answer
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


def post_to_pass_through(app: Flask, event: object, deadline: Deadline | None = None) -> dict[str, Any]:
    """POST ``event`` as JSON to the pass-through path inside this process; raise on a 5xx answer.
    ``deadline`` (the invocation's end) travels in the request's ``PassThrough``, for the worker."""
    environ = {PASS_THROUGH_ENVIRON_KEY: PassThrough(deadline or UNLIMITED)}
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
