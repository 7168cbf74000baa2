"""CORS for the read routes only: a listed ``Origin`` is echoed back; any other gets no CORS headers.
With ``CORS_ALLOWED_ORIGINS=*`` (a public read API) every origin is allowed with ``*``, which browsers
never combine with credentials (and ``Access-Control-Allow-Credentials`` is never sent).

The webhook and ``/events`` routes never call this, so a browser can never be allowed to post to them.
"""

from __future__ import annotations

from collections.abc import Collection

from flask import Request, Response

_METHODS = "GET, HEAD, OPTIONS"
_PREFLIGHT_MAX_AGE = "600"


ANY_ORIGIN = "*"


def listed_origin(request: Request, allowed: Collection[str]) -> str | None:
    """What ``Access-Control-Allow-Origin`` says to this request: ``*`` when any origin is allowed, the
    request's own ``Origin`` when it is listed, else None (no CORS)."""
    if ANY_ORIGIN in allowed:
        return ANY_ORIGIN
    origin = request.headers.get("Origin")
    return origin if origin is not None and origin in allowed else None


def add_headers(response: Response, request: Request, allowed: Collection[str]) -> None:
    if not allowed:
        return
    if ANY_ORIGIN not in allowed:
        # The answer differs by Origin, so a shared cache must key on it, whoever asked this time.
        response.vary.add("Origin")
    origin = listed_origin(request, allowed)
    if origin is not None:
        response.headers["Access-Control-Allow-Origin"] = origin
        # ETag is not a CORS-safelisted response header: a front end revalidating by hand needs it.
        response.headers["Access-Control-Expose-Headers"] = "ETag"


def preflight(request: Request, allowed: Collection[str]) -> Response | None:
    """The 204 answer to a preflight from a listed origin; None when this is not one."""
    origin = listed_origin(request, allowed)
    if (
        origin is None
        or "Origin" not in request.headers
        or "Access-Control-Request-Method" not in request.headers
    ):
        return None
    response = Response(status=204)
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Allow-Methods"] = _METHODS
    requested = request.headers.get("Access-Control-Request-Headers", "")
    response.headers["Access-Control-Allow-Headers"] = requested[:1000] or "If-None-Match"
    response.headers["Access-Control-Max-Age"] = _PREFLIGHT_MAX_AGE
    response.vary.update(["Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"])
    return response
