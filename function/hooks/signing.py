"""Standard Webhooks signatures: ``whsec_`` secrets, message ids and the three ``webhook-*`` headers.

The specification (standardwebhooks.com): the secret is ``whsec_`` + base64 of 24 to 64 random bytes,
and the HMAC key is those bytes. Each request carries ``webhook-id`` (the message's id, the same on
every retry of one message), ``webhook-timestamp`` (integer seconds since the epoch, of this attempt)
and ``webhook-signature``: ``v1,`` + base64 of HMAC-SHA256 over ``id.timestamp.body``, several
signatures separated by spaces (both the new and the old secret's while a rotation is in its grace
period), so a receiver accepts the request if any one of them verifies.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix the specification gives every secret
# The specification allows 24 to 64 bytes; 32 is HMAC-SHA256's block-sized key.
SECRET_BYTES = 32
MESSAGE_ID_PREFIX = "msg_"


def new_secret() -> str:
    """A fresh endpoint secret, ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_`` secret; ValueError for anything else (never echoing it)."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError("a webhook secret starts with whsec_")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a webhook secret is whsec_ followed by base64") from None
    if not 24 <= len(key) <= 64:
        raise ValueError("a webhook secret holds 24 to 64 bytes")
    return key


def new_message_id() -> str:
    """A message id, unique across messages (``msg_`` + 24 hex digits: 96 random bits)."""
    return MESSAGE_ID_PREFIX + secrets.token_hex(12)


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of id.timestamp.body>`` with ``secret``'s key."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signed_headers(
    secrets_in_use: Sequence[str], message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three ``webhook-*`` headers, signed with every secret in use (the current one first)."""
    if not secrets_in_use:
        raise ValueError("at least one secret is needed to sign")
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, message_id, timestamp, body) for s in secrets_in_use),
    }
