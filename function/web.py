"""What every Flask route needs from the app: its Services (set by create_app)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app

if TYPE_CHECKING:
    # For the type only: the composition root imports every layer, and the accept path must not.
    from function.services import Services


def services() -> Services:
    """The app's Services (set by create_app)."""
    found: Services = current_app.extensions["blog_api"]
    return found
