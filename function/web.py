"""HTTP routes, one blueprint per feature."""

from __future__ import annotations

from flask import current_app

from function.services import Services


def services() -> Services:
    """The app's Services (set by create_app)."""
    found: Services = current_app.extensions["blog_api"]
    return found
