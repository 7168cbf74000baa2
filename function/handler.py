"""The Lambda entry: ``function.handler.handler(event, context)``.

HTTP events (API Gateway v1/v2, Function URL, ALB) go to the Flask app through serverless-wsgi.
Every other event is posted to the pass-through path, as Lambda Web Adapter does — but a 5xx answer
raises, so Lambda's asynchronous retries (and then the dead-letter queue) apply.
"""

from __future__ import annotations

from typing import Any

from function.aws.dispatch import dispatch

_app: Any = None


def get_app() -> Any:
    """The app, built on the first event of this execution environment and kept for the next ones."""
    global _app
    if _app is None:
        from function.app import create_app

        _app = create_app()
    return _app


def handler(event: Any, context: Any) -> Any:
    return dispatch(get_app(), event, context)
