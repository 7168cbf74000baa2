"""Validators and compression for read answers: a strong ETag, 304 on ``If-None-Match``,
``Cache-Control``, ``Last-Modified``, and gzip for bodies over 1 KB when the client accepts it.

The ETag is a hash of the identity body, so anything that changes the answer (an edit, an article
whose scheduled time has come, a filter) changes it, and nothing else does. A gzip body is another
representation, so it gets its own tag (``-gzip`` suffix); a 304 is answered for either.
If-Modified-Since is ignored: a list's newest time does not move when an article leaves it.
"""

from __future__ import annotations

import gzip
import hashlib
from datetime import datetime

from flask import Request, Response

GZIP_MIN_BYTES = 1024
_GZIP_SUFFIX = "-gzip"
# Kept for revalidation answers: what a cache needs to refresh what it has.
_304_HEADERS = ("Cache-Control", "ETag", "Last-Modified", "Vary", "Content-Location", "Expires")


def finish(
    response: Response, request: Request, *, cache_control: str, last_modified: datetime | None
) -> Response:
    """Add validators to a 200 read answer; 304 when the client already has it; gzip when it pays."""
    if request.method not in ("GET", "HEAD") or response.status_code != 200 or response.direct_passthrough:
        return response
    body = response.get_data()
    base = hashlib.sha256(body).hexdigest()[:32]
    compress = len(body) > GZIP_MIN_BYTES and accepts_gzip(request)
    tag = base + _GZIP_SUFFIX if compress else base
    response.set_etag(tag)
    response.headers["Cache-Control"] = cache_control
    if last_modified is not None:
        response.last_modified = last_modified
    response.vary.add("Accept-Encoding")
    wanted = request.if_none_match
    if wanted and (wanted.contains_weak(base) or wanted.contains_weak(base + _GZIP_SUFFIX)):
        return not_modified(response)
    if compress:
        response.set_data(gzip.compress(body, compresslevel=6, mtime=0))
        response.headers["Content-Encoding"] = "gzip"
    return response


def accepts_gzip(request: Request) -> bool:
    return request.accept_encodings.quality("gzip") > 0


def not_modified(response: Response) -> Response:
    answer = Response(status=304)
    del answer.headers["Content-Type"]  # a 304 has no body to describe
    for name in _304_HEADERS:
        if name in response.headers:
            answer.headers[name] = response.headers[name]
    return answer
