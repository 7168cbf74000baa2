"""Git object ids computed the way git computes them, shared by every article source."""

from __future__ import annotations

import hashlib


def git_blob_sha(data: bytes) -> str:
    """The git blob SHA-1 of ``data`` in hex, equal to ``git hash-object`` on a file holding ``data``."""
    # git hashes a header "blob <size>\0" followed by the content; no newline normalisation.
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()
