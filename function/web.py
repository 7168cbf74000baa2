"""What every Flask route needs from the app: its Services (set by create_app), and what the handler's
pass-through hands a request (``PassThrough``), read here only. Routes call these at their edge and pass
the values down as arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app, request

from function.aws.dispatch import PASS_THROUGH_ENVIRON_KEY, PassThrough

if TYPE_CHECKING:
    # For the type only: the composition root imports every layer, and the accept path must not.
    from function.services import Services


def services() -> Services:
    """The app's Services (set by create_app)."""
    found: Services = current_app.extensions["blog_api"]
    return found


def pass_through() -> PassThrough | None:
    """The handler's ``PassThrough`` for this request; None for a request that came over HTTP."""
    found = request.environ.get(PASS_THROUGH_ENVIRON_KEY)
    return found if isinstance(found, PassThrough) else None
