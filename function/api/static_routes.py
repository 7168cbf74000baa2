"""GET /static/content.css and /static/highlight.css: the stylesheets for ``contentHtml``.

``content.css`` styles everything the renderer emits (``content_css``), highlighted code included;
``highlight.css`` is only the code's colours, for front ends that style the rest themselves. Both change
only with a deploy, so each carries a strong ETag (a hash of its text, answered 304 when it matches) and is
cached for a day; ``content.css?v=<version>`` (the ETag) may be cached for good by a front end that puts
the version in its URL.
"""

from __future__ import annotations

import functools

from flask import Blueprint, Response, request

from function.api import http_cache

blueprint = Blueprint("static_assets", __name__)

STYLESHEET_CACHE_CONTROL = "public, max-age=86400"
VERSIONED_CACHE_CONTROL = "public, max-age=31536000, immutable"


@blueprint.get("/static/content.css")
def content_css() -> Response:
    # Imported here: Pygments is only needed when the stylesheet is asked for, not at cold start.
    from function.api.content_css import stylesheet, version

    # Only the URL naming this very version may be kept for good; an old or made-up one gets a day.
    versioned = request.args.get("v") == version()
    return _stylesheet_answer(
        stylesheet(), VERSIONED_CACHE_CONTROL if versioned else STYLESHEET_CACHE_CONTROL
    )


@blueprint.get("/static/highlight.css")
def highlight_css() -> Response:
    return _stylesheet_answer(_highlight_stylesheet(), STYLESHEET_CACHE_CONTROL)


def _stylesheet_answer(text: str, cache_control: str) -> Response:
    response = Response(text, mimetype="text/css")
    return http_cache.finish(response, request, cache_control=cache_control, last_modified=None)


@functools.cache
def _highlight_stylesheet() -> str:
    from function.articles.highlight import stylesheet

    return stylesheet()
