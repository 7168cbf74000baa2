"""What GitHub's answers hold for the source: regular-file blobs of a tree listing, and the content of
a Git Blobs API answer. Pure functions, no HTTP."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from function.sources.port import RepoFile

_SYMLINK_MODE = "120000"


def tree_blob(entry: Mapping[str, Any]) -> RepoFile | None:
    """A regular-file blob of the tree listing (symlinks and submodules are not files)."""
    path, sha, size = entry["path"], entry.get("sha"), entry.get("size")
    if entry.get("type") != "blob" or entry.get("mode") == _SYMLINK_MODE:
        return None
    if not isinstance(path, str) or not isinstance(sha, str):
        return None
    return RepoFile(path=path, sha=sha.lower(), size=size if isinstance(size, int) else None)


def json_blob_content(body: bytes) -> bytes | None:
    """The content of a Git Blobs API JSON answer (``{"content": …, "encoding": "base64"}``), if it is one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("encoding") != "base64":
        return None
    content = data.get("content")
    if not isinstance(content, str):
        return None
    try:
        return base64.b64decode(content)
    except (binascii.Error, ValueError):
        return None
