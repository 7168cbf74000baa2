"""Content-addressed keys: ``<sha256 of the bytes>.<extension of the type>``.

A changed image is a new key, hence a new URL: objects are immutable and cached for a year, and
nothing ever needs invalidating. The same bytes under two paths (a renamed image) are one object.
"""

from __future__ import annotations

import hashlib
import re

from function.assets.kinds import ImageKind, kind_of_extension

# Served long and never revalidated: a key's bytes never change.
IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable"
_KEY_RE = re.compile(r"[0-9a-f]{64}\.(png|jpg|gif|webp|avif)")


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def asset_key(sha256: str, kind: ImageKind) -> str:
    return f"{sha256}.{kind.extension}"


def is_key(value: str) -> bool:
    """Whether ``value`` is a well-formed key (no path, no other extension): the only names served."""
    # fullmatch: "$" would also match before a trailing newline ("<sha>.png\n" is no key).
    return _KEY_RE.fullmatch(value) is not None


def content_type_of(key: str) -> str:
    """The ``Content-Type`` of a well-formed key (ValueError for any other string)."""
    if not is_key(key):
        raise ValueError(f"not an asset key: {key!r}")
    kind = kind_of_extension(key.rsplit(".", 1)[1])
    assert kind is not None  # the pattern lists only known extensions
    return kind.content_type


def asset_url(base_url: str, key: str) -> str:
    return f"{base_url.rstrip('/')}/{key}"
