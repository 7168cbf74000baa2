"""One place that turns every exception into ``{"error": CODE, "message": text}`` with its status."""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from function.errors import BlogApiError
from function.observability.logs import redact

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    414: "URI_TOO_LONG",
    415: "UNSUPPORTED_MEDIA_TYPE",
    431: "HEADERS_TOO_LARGE",
}


def error_response(status: int, code: str, message: str) -> tuple[Response, int]:
    # Messages can quote a dependency's answer; what leaves the process goes through the same
    # redaction as the logs (configured secret values and token shapes).
    return jsonify({"error": code, "message": redact(message)}), status


def retryable_errors() -> tuple[type[BaseException], ...]:
    """Dependency failures worth a retry: answered 503 so Lambda (or GitHub's redelivery) tries again."""
    from function.errors import DatabaseUnavailable, LockTimeout, SourceUnavailable

    return (SourceUnavailable, DatabaseUnavailable, LockTimeout)


def to_response(exc: BaseException) -> tuple[Response, int]:
    """The JSON answer for ``exc``; logs the unexpected ones (without the request body)."""
    if isinstance(exc, BlogApiError):
        return error_response(exc.status, exc.code, exc.message)
    if isinstance(exc, HTTPException):
        status = exc.code or 500
        response, status = error_response(
            status, _HTTP_CODES.get(status, "HTTP_ERROR"), exc.description or exc.name
        )
        if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
            # HTTP requires a 405 to say which methods the resource has.
            response.headers["Allow"] = ", ".join(sorted(exc.valid_methods))
        return response, status
    from function.errors import SourcePermanentError

    if isinstance(exc, SourcePermanentError):
        # Retrying cannot help (installation or repository gone): a 4xx stops Lambda's retries.
        log.warning("Source refused", extra={"error": str(exc)})
        return error_response(422, "SOURCE_REFUSED", redact(str(exc), 500))
    if isinstance(exc, retryable_errors()):
        # The details (hosts, ports, paths) go to the log; whoever called, a blog reader included, gets
        # what happened in general terms.
        log.warning("Dependency unavailable", extra={"error_type": type(exc).__name__, "error": str(exc)})
        return error_response(503, "UNAVAILABLE", _public_reason(exc))
    log.exception("Unhandled error")
    return error_response(500, "INTERNAL", "internal error")


def _public_reason(exc: BaseException) -> str:
    from function.errors import DatabaseNotInitialised, DatabaseUnavailable, LockTimeout

    if isinstance(exc, DatabaseNotInitialised):
        return str(exc)  # the fix, and nothing about the server
    if isinstance(exc, DatabaseUnavailable):
        return "the database is unavailable; try again later"
    if isinstance(exc, LockTimeout):
        return "another sync of this user is still running; try again later"
    return "the article source is unavailable; try again later"


def no_store_on_errors(response: Response) -> Response:
    """Every error answer says ``Cache-Control: no-store``: a cache (a CDN, a browser) that kept one
    would go on serving a passing failure, or one a single client provoked, to everyone."""
    if response.status_code >= 400:
        response.headers["Cache-Control"] = "no-store"
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(Exception, to_response)
    # App-wide, after every blueprint's own hooks: whatever answered the error, this has the last word.
    app.after_request(no_store_on_errors)
