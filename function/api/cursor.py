"""Page cursors: the keyset of the last article served, signed so that only the server makes them.

A cursor names its user and its filters too: one made for another user or another ``type``/``tag`` is
refused like a tampered one (it would page through the wrong list). The key is a random one the server
made and keeps in the database (``function.store.server_keys``): a cursor is public, so its key must not
be derived from anything a person chose, such as the webhook secret (an offline guess from one cursor
would reveal it). Rotating the key only invalidates open cursors.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from datetime import datetime

from function.errors import BadRequest
from function.store.records import Keyset

MAX_CURSOR_CHARS = 2048
_SIGNATURE_BYTES = 16
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


class CursorCodec:
    def __init__(self, key: bytes) -> None:
        if len(key) < 32:
            raise ValueError("a cursor key has at least 32 random bytes")
        self._key = key

    def encode(self, key: Keyset, *, user: str, filters: tuple[str | None, ...]) -> str:
        payload = {"u": user, "f": list(filters), "p": key.published_at.strftime(_TIME_FORMAT), "s": key.slug}
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        return f"{_b64(data)}.{_b64(self._sign(data))}"

    def decode(self, cursor: str, *, user: str, filters: tuple[str | None, ...]) -> Keyset:
        """The keyset in ``cursor``; BadRequest for anything this server did not make for this list."""
        if len(cursor) > MAX_CURSOR_CHARS:
            raise BadRequest("'cursor' is not a cursor this server made")
        try:
            data_part, _, signature_part = cursor.partition(".")
            data, signature = _unb64(data_part), _unb64(signature_part)
        except (ValueError, binascii.Error):
            raise BadRequest("'cursor' is not a cursor this server made") from None
        if not hmac.compare_digest(signature, self._sign(data)):
            raise BadRequest("'cursor' is not a cursor this server made")
        payload = json.loads(data)  # signed by us: well-formed
        if payload.get("u") != user or payload.get("f") != list(filters):
            raise BadRequest("'cursor' was made for another list (another user or other filters)")
        return Keyset(datetime.strptime(payload["p"], _TIME_FORMAT), payload["s"])

    def _sign(self, data: bytes) -> bytes:
        return hmac.new(self._key, data, hashlib.sha256).digest()[:_SIGNATURE_BYTES]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
