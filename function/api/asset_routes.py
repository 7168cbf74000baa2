"""GET /assets/<key>: the stored images from the asset folder, for ``make run`` and any deployment
without a bucket. On AWS the images are read from CloudFront, and this route finds nothing to serve."""

from __future__ import annotations

from flask import Blueprint, Response

from function.assets.keys import IMMUTABLE_CACHE_CONTROL, content_type_of, is_key
from function.errors import NotFound
from function.web import services as app_services

blueprint = Blueprint("assets", __name__)


@blueprint.get("/assets/<key>")
def asset(key: str) -> Response:
    # Only content-addressed keys: no other name, and so no path, ever reaches the folder.
    if not is_key(key):
        raise NotFound("no such image")
    services = app_services()
    if services.settings.asset_bucket:
        raise NotFound("images are served by the asset domain, not by the API")
    data = services.asset_store().get(key)
    if data is None:
        raise NotFound("no such image")
    response = Response(data, mimetype=content_type_of(key))
    # The type was read from the bytes when stored; the browser must not guess another.
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = IMMUTABLE_CACHE_CONTROL
    # An image needs nothing else: no script or style even if a browser were talked into a document.
    response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
