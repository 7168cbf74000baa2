"""One contract for both asset stores: the folder (``make run``) and S3 (moto)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws

from function.assets.folder import FolderAssetStore
from function.assets.keys import IMMUTABLE_CACHE_CONTROL, asset_key, content_sha256
from function.assets.kinds import PNG
from function.assets.port import AssetStore
from function.assets.s3 import S3AssetStore, s3_client_factory
from function.errors import AssetStoreError
from tests.kit import images

BUCKET = "d-st-blog-api-assets"


@pytest.fixture(params=["folder", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path, aws_env: None) -> Iterator[AssetStore]:
    if request.param == "folder":
        yield FolderAssetStore(tmp_path / "assets")
        return
    with mock_aws():
        factory = s3_client_factory(None)
        factory().create_bucket(Bucket=BUCKET)
        yield S3AssetStore(BUCKET, factory)


def _key(data: bytes) -> str:
    return asset_key(content_sha256(data), PNG)


def test_what_is_put_is_got_back(store: AssetStore) -> None:
    data = images.png()
    store.put(_key(data), data, "image/png")
    assert store.get(_key(data)) == data


def test_putting_the_same_key_twice_keeps_one_copy(store: AssetStore) -> None:
    data = images.png()
    store.put(_key(data), data, "image/png")
    store.put(_key(data), data, "image/png")
    assert store.get(_key(data)) == data


def test_a_key_never_put_is_none(store: AssetStore) -> None:
    assert store.get(_key(images.png((1, 2, 3)))) is None


def test_deleting_removes_and_deleting_again_is_harmless(store: AssetStore) -> None:
    data = images.png()
    store.put(_key(data), data, "image/png")
    store.delete(_key(data))
    assert store.get(_key(data)) is None
    store.delete(_key(data))


@pytest.mark.parametrize("key", ["../escape.png", "x/../../etc/passwd", "a" * 64 + ".svg"])
def test_only_well_formed_keys_are_accepted(store: AssetStore, key: str) -> None:
    with pytest.raises(ValueError):
        store.put(key, images.png(), "image/png")
    with pytest.raises(ValueError):
        store.get(key)


def test_s3_objects_carry_their_type_and_a_year_of_immutable_cache(aws_env: None) -> None:
    with mock_aws():
        factory = s3_client_factory(None)
        client: Any = factory()
        client.create_bucket(Bucket=BUCKET)
        data = images.png()
        S3AssetStore(BUCKET, factory).put(_key(data), data, "image/png")
        head = client.head_object(Bucket=BUCKET, Key=_key(data))
    assert head["ContentType"] == "image/png"
    assert head["CacheControl"] == IMMUTABLE_CACHE_CONTROL == "public, max-age=31536000, immutable"


def test_s3_refusing_an_upload_is_an_asset_store_error_naming_the_key(aws_env: None) -> None:
    with mock_aws():
        store = S3AssetStore("no-such-bucket", s3_client_factory(None))
        data = images.png()
        with pytest.raises(AssetStoreError, match=_key(data)) as caught:
            store.put(_key(data), data, "image/png")
    assert "NoSuchBucket" in str(caught.value)


def test_the_folder_store_never_leaves_a_partial_file(tmp_path: Path) -> None:
    store = FolderAssetStore(tmp_path / "assets")
    data = images.png()
    store.put(_key(data), data, "image/png")
    assert sorted(p.name for p in (tmp_path / "assets").iterdir()) == [_key(data)]
