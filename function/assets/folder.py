"""The asset store as a local folder (``make run``; the app serves it at ``/assets/<key>``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from function.assets.keys import is_key
from function.errors import AssetStoreError


class FolderAssetStore:
    """One file per key in ``root``, created on first write. Only well-formed keys are accepted, so no
    name can reach outside the folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, key: str) -> Path:
        if not is_key(key):
            raise ValueError(f"not an asset key: {key!r}")
        return self.root / key

    def put(self, key: str, data: bytes, content_type: str) -> None:
        target = self._file(key)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # Written beside and renamed: a reader never sees half an image under its final name.
            fd, temporary = tempfile.mkstemp(dir=self.root, prefix=".partial-")
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except OSError as exc:
            raise AssetStoreError(f"asset {key}: cannot write to the asset folder: {exc.strerror}") from None

    def get(self, key: str) -> bytes | None:
        try:
            return self._file(key).read_bytes()
        except FileNotFoundError:
            return None

    def delete(self, key: str) -> None:
        self._file(key).unlink(missing_ok=True)
