"""GET /assets/<key>: the folder store's images, with their type and nothing a browser could run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from function.app import create_app
from function.assets.folder import FolderAssetStore
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.settings import Settings
from tests.kit import images


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "assets"


@pytest.fixture
def client(make_settings: Callable[..., Settings], folder: Path) -> FlaskClient:
    return create_app(make_settings(lambda_function_name=None, asset_dir=str(folder))).test_client()


def _stored(folder: Path) -> tuple[str, bytes]:
    data = images.png()
    key = asset_key(content_sha256(data), PNG)
    FolderAssetStore(folder).put(key, data, PNG.content_type)
    return key, data


def test_a_stored_image_is_served_with_its_type_nosniff_and_a_year_of_cache(
    client: FlaskClient, folder: Path
) -> None:
    key, data = _stored(folder)
    response = client.get(f"/assets/{key}")
    assert response.status_code == 200
    assert response.data == data
    assert response.headers["Content-Type"] == "image/png"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert "sandbox" in response.headers["Content-Security-Policy"]


def test_an_unknown_key_is_a_404_in_json(client: FlaskClient) -> None:
    response = client.get(f"/assets/{'b' * 64}.png")
    assert response.status_code == 404
    assert response.get_json()["error"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "name", ["..%2F..%2Fetc%2Fpasswd", "blog.db", "a" * 64 + ".svg", "a" * 64 + ".html", ".partial-x"]
)
def test_only_well_formed_keys_reach_the_folder(client: FlaskClient, folder: Path, name: str) -> None:
    # GIVEN a file in the folder that is not an image key
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name.replace("%2F", "_")).write_bytes(b"<script>alert(1)</script>")
    response = client.get(f"/assets/{name}")
    assert response.status_code == 404
    assert b"script" not in response.data


def test_with_a_bucket_the_api_serves_no_images(make_settings: Callable[..., Settings], folder: Path) -> None:
    key, _ = _stored(folder)
    settings = make_settings(lambda_function_name=None, asset_dir=str(folder), asset_bucket="d-st-assets")
    response = create_app(settings).test_client().get(f"/assets/{key}")
    assert response.status_code == 404
    assert "asset domain" in response.get_json()["message"]
