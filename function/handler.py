"""The Lambda entry: ``function.handler.handler(event, context)``.

HTTP events (API Gateway v1/v2, Function URL, ALB) go to the Flask app through serverless-wsgi.
Every other event is posted to the pass-through path, as Lambda Web Adapter does — but a 5xx answer
raises, so Lambda's asynchronous retries (and then the dead-letter queue) apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from function.aws.dispatch import dispatch

if TYPE_CHECKING:
    from flask import Flask

_app: Flask | None = None


def get_app() -> Flask:
    """The app, built on the first event of this execution environment and kept for the next ones."""
    global _app
    if _app is None:
        from function.app import create_app

        _app = create_app()
    return _app


def handler(event: object, context: object) -> dict[str, Any]:
    return dispatch(get_app(), event, context)


def after_restore() -> None:
    """SnapStart's restore hook: the restored environment opens its own connections (see
    ``Services.after_restore``). Imports nothing: the restore path must stay as light as a warm call."""
    if _app is not None:
        _app.extensions["blog_api"].after_restore()


def _register_restore_hook() -> None:
    # The Lambda runtime ships ``snapshot_restore_py`` (only with SnapStart on Python); elsewhere
    # there is nothing to register with. Importing it is a few dozen lines, not a stack.
    try:
        from snapshot_restore_py import register_after_restore
    except ImportError:
        return
    register_after_restore(after_restore)


_register_restore_hook()
