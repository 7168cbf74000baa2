"""The asset store as an S3 bucket, read by readers only through CloudFront (``infra/assets.py``).

The client is built on first use (never at import), with the same time-outs and proxy rules as the
function's other AWS clients. S3 is reached through the VPC's gateway endpoint, not the proxy."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from function.assets.keys import IMMUTABLE_CACHE_CONTROL, is_key
from function.errors import AssetStoreError

ClientFactory = Callable[[], Any]


class S3AssetStore:
    def __init__(self, bucket: str, client_factory: ClientFactory) -> None:
        self.bucket = bucket
        self._client_factory = client_factory
        self._client: Any = None
        self._lock = threading.Lock()

    def _s3(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._client_factory()
            return self._client

    def put(self, key: str, data: bytes, content_type: str) -> None:
        _check(key)
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._s3().put_object(
                Bucket=self.bucket,
                Key=key,
                Body=data,
                ContentType=content_type,
                CacheControl=IMMUTABLE_CACHE_CONTROL,
            )
        except (BotoCoreError, ClientError) as exc:
            raise AssetStoreError(f"asset {key}: S3 refused the upload: {_reason(exc)}") from None

    def get(self, key: str) -> bytes | None:
        _check(key)
        from botocore.exceptions import ClientError

        try:
            answer = self._s3().get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _reason(exc) in ("NoSuchKey", "404"):
                return None
            raise AssetStoreError(f"asset {key}: S3 refused the read: {_reason(exc)}") from None
        body: bytes = answer["Body"].read()
        return body

    def delete(self, key: str) -> None:
        _check(key)
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._s3().delete_object(Bucket=self.bucket, Key=key)  # no error for a missing key
        except (BotoCoreError, ClientError) as exc:
            raise AssetStoreError(f"asset {key}: S3 refused the deletion: {_reason(exc)}") from None


def _check(key: str) -> None:
    if not is_key(key):
        raise ValueError(f"not an asset key: {key!r}")


def _reason(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", type(exc).__name__))
    return type(exc).__name__


def s3_client_factory(https_proxy: str | None, no_proxy: tuple[str, ...] = ()) -> ClientFactory:
    """Builds the S3 client when first called: short time-outs, a few attempts (an image is at most a
    few MiB; the worker's time budget is the real bound)."""

    def build() -> Any:
        from function.aws.clients import client

        return client(
            "s3", connect_timeout=3, read_timeout=20, attempts=3, https_proxy=https_proxy, no_proxy=no_proxy
        )

    return build
