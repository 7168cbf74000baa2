"""The asset store port: where stored images live. Two adapters behave the same (the contract tests
run both): a folder (``function.assets.folder``) and an S3 bucket (``function.assets.s3``)."""

from __future__ import annotations

from typing import Protocol


class AssetStore(Protocol):
    def put(self, key: str, data: bytes, content_type: str) -> None:
        """Store ``data`` under ``key`` (a well-formed content-addressed key): idempotent, since the
        same key always holds the same bytes. Raises ``AssetStoreError`` when it cannot."""
        ...

    def get(self, key: str) -> bytes | None:
        """The bytes under ``key``, or None when nothing is stored there."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; nothing happens when it is not there."""
        ...
