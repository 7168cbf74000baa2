"""GET /static/highlight.css: the stylesheet for the classes of highlighted code in ``contentHtml``."""

from __future__ import annotations

import functools

from flask import Blueprint, Response

blueprint = Blueprint("static_assets", __name__)


@blueprint.get("/static/highlight.css")
def highlight_css() -> Response:
    response = Response(_stylesheet(), mimetype="text/css")
    # It changes only with a deploy (a Pygments upgrade or another style).
    response.headers["Cache-Control"] = "public, max-age=86400"
    return response


@functools.cache
def _stylesheet() -> str:
    # Imported here: Pygments is only needed when the stylesheet is asked for, not at cold start.
    from function.articles.highlight import stylesheet

    return stylesheet()
