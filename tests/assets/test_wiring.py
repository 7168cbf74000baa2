"""Which store the settings choose, and when blog-api copies no images at all."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from moto import mock_aws

from function.assets.folder import FolderAssetStore
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.assets.s3 import S3AssetStore, s3_client_factory
from function.assets.wiring import asset_store, asset_sync
from function.settings import Settings
from tests.kit import images


def test_without_a_bucket_images_go_to_the_folder(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    store = asset_store(make_settings(asset_dir=str(tmp_path / "a")))
    assert isinstance(store, FolderAssetStore) and store.root == tmp_path / "a"


def test_with_a_bucket_images_go_to_s3(make_settings: Callable[..., Settings], aws_env: None) -> None:
    data = images.png()
    key = asset_key(content_sha256(data), PNG)
    with mock_aws():
        store = asset_store(make_settings(asset_bucket="d-st-blog-api-assets-1"))
        assert isinstance(store, S3AssetStore)
        s3_client_factory(None)().create_bucket(Bucket="d-st-blog-api-assets-1")
        store.put(key, data, PNG.content_type)
        assert store.get(key) == data


def test_article_asset_base_url_means_no_image_is_copied(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings(asset_base_url="https://cdn.example.com")
    assert asset_sync(settings, None, FolderAssetStore(tmp_path), source=None) is None
