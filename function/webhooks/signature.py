"""GitHub's webhook signature: HMAC-SHA256 of the raw body with the webhook secret."""

from __future__ import annotations

import hashlib
import hmac

from function.errors import InvalidSignature

PREFIX = "sha256="


def sign(secret: str | bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``."""
    key = secret.encode() if isinstance(secret, str) else secret
    return PREFIX + hmac.new(key, body, hashlib.sha256).hexdigest()


def verify(secret: str | bytes, body: bytes, header: str | None) -> None:
    """Raise InvalidSignature unless ``header`` is the signature of ``body``.

    The comparison is constant-time over bytes (``hmac.compare_digest``), so a forged header
    learns nothing from timing; a header with non-ASCII characters is simply wrong, never an error.
    """
    if not header:
        raise InvalidSignature("X-Hub-Signature-256 header is missing")
    expected = sign(secret, body).encode("ascii")
    given = header.strip().encode("utf-8", "replace")
    if not hmac.compare_digest(expected, given):
        raise InvalidSignature("signature does not match the body")
