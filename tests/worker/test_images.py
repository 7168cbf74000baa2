"""Repository images reach readers: a private repository's images are copied to the asset store in the
same pass as the articles, each blob downloaded and uploaded once, and ``contentHtml`` points at them."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from function.assets.folder import FolderAssetStore
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.assets.sweep import collect_assets
from function.observability.metrics import NullMetrics
from function.settings import Settings
from function.sources.gitsha import git_blob_sha
from function.store.asset_records import AssetRecords
from function.worker.redelivery import run_scheduled
from tests.kit import images
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.deliveries import delivery_uuid
from tests.kit.hook_deliveries import HookDeliveries

RED, BLUE = images.png((255, 0, 0)), images.png((0, 0, 255))
PETS = article("Pets", body="![cat](/images/cat.png)\n\n![dog](https://example.com/dog.png)")


class RecordingStore(FolderAssetStore):
    """The folder store, counting what was put and deleted."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.puts: list[str] = []
        self.deletes: list[str] = []

    def put(self, key: str, data: bytes, content_type: str) -> None:
        self.puts.append(key)
        super().put(key, data, content_type)

    def delete(self, key: str) -> None:
        self.deletes.append(key)
        super().delete(key)


@pytest.fixture
def assets(blog: Blog, tmp_path: Path) -> RecordingStore:
    blog.asset_store = RecordingStore(tmp_path / "stored")
    return blog.asset_store


def key_of(data: bytes) -> str:
    return asset_key(content_sha256(data), PNG)


def image_sources(blog: Blog, slug: str) -> list[str]:
    return re.findall(r'<img [^>]*?src="([^"]*)"', blog.article(slug)["contentHtml"])


def blob_requests(blog: Blog, data: bytes) -> int:
    sha = git_blob_sha(data)
    return sum(1 for r in blog.github.requests if r.kind == "blob" and sha in r.path)


def push(blog: Blog, delivery: str) -> dict[str, object]:
    answer = blog.push(delivery=delivery)
    assert answer.status_code == 200, answer.get_json()
    body: dict[str, object] = answer.get_json()
    return body


def test_a_private_repositorys_images_are_served_through_the_asset_url(
    blog: Blog, assets: RecordingStore
) -> None:
    # GIVEN a private repository with an article showing an image of the images folder
    blog.commit({"articles/pets.md": PETS, "images/cat.png": RED})
    # WHEN it is pushed
    push(blog, "d-1")
    # THEN the article's image points at the asset URL, which serves the image; other URLs are untouched
    assert image_sources(blog, "pets") == [f"/assets/{key_of(RED)}", "https://example.com/dog.png"]
    served = blog.client.get(f"/assets/{key_of(RED)}")
    assert served.status_code == 200 and served.data == RED
    assert served.headers["Content-Type"] == "image/png"
    assert assets.puts == [key_of(RED)] and blob_requests(blog, RED) == 1


def test_a_push_that_changes_no_image_costs_no_image_request(blog: Blog, assets: RecordingStore) -> None:
    blog.commit({"articles/pets.md": PETS, "images/cat.png": RED})
    push(blog, "d-1")
    blog.github.reset_records()
    # WHEN only the article's text changes
    blog.commit({"articles/pets.md": article("Pets!", body="![cat](/images/cat.png)")})
    push(blog, "d-2")
    # THEN the image is neither downloaded nor uploaded again, and still shown
    assert blob_requests(blog, RED) == 0 and assets.puts == [key_of(RED)]
    assert image_sources(blog, "pets") == [f"/assets/{key_of(RED)}"]


def test_an_image_only_push_updates_the_articles_that_show_it(blog: Blog, assets: RecordingStore) -> None:
    blog.commit({"articles/pets.md": PETS, "articles/plain.md": article("Plain"), "images/cat.png": RED})
    push(blog, "d-1")
    # WHEN only the image changes
    blog.commit({"images/cat.png": BLUE})
    push(blog, "d-2")
    # THEN the new bytes are stored under a new key and the article points at it
    assert image_sources(blog, "pets")[0] == f"/assets/{key_of(BLUE)}"
    assert assets.puts == [key_of(RED), key_of(BLUE)]
    assert blob_requests(blog, BLUE) == 1


def test_a_renamed_image_is_neither_downloaded_nor_uploaded_again(blog: Blog, assets: RecordingStore) -> None:
    blog.commit({"articles/pets.md": PETS, "images/cat.png": RED})
    push(blog, "d-1")
    # WHEN the image is renamed and the article follows
    blog.commit(
        {
            "images/cat.png": None,
            "images/kitten.png": RED,
            "articles/pets.md": article("Pets", body="![cat](/images/kitten.png)"),
        }
    )
    push(blog, "d-2")
    # THEN the same object serves it: one download and one upload in all
    assert image_sources(blog, "pets") == [f"/assets/{key_of(RED)}"]
    assert blob_requests(blog, RED) == 1 and assets.puts == [key_of(RED)]


def test_a_deleted_image_is_kept_while_referenced_then_collected_after_the_grace_period(
    blog: Blog, assets: RecordingStore
) -> None:
    blog.commit({"articles/pets.md": PETS, "images/cat.png": RED})
    push(blog, "d-1")
    records = AssetRecords(blog.db)
    # WHEN the image is deleted while the article still shows it
    blog.commit({"images/cat.png": None})
    push(blog, "d-2")
    later = _gone_at(blog) + timedelta(days=30)
    # THEN the stored copy is still served, with a warning, and the sweep keeps it however late it runs
    assert image_sources(blog, "pets")[0] == f"/assets/{key_of(RED)}"
    with blog.store():
        assert collect_assets(records, assets, later, timedelta(days=7)).deleted == []
    # WHEN the article stops showing it
    blog.commit({"articles/pets.md": article("Pets", body="No picture.")})
    push(blog, "d-3")
    with blog.store():
        gone = _gone_at(blog)
        # THEN it stays for the grace period, and is deleted after it
        assert collect_assets(records, assets, gone + timedelta(days=6), timedelta(days=7)).deleted == []
        assert collect_assets(records, assets, gone + timedelta(days=8), timedelta(days=7)).deleted == [
            key_of(RED)
        ]
    assert blog.client.get(f"/assets/{key_of(RED)}").status_code == 404


def _gone_at(blog: Blog) -> datetime:
    with blog.store() as store:
        user = store.users.get_user(USER)
        assert user is not None
        (row,) = AssetRecords(store.db).load_assets(user.id).values()
    assert row.gone_at is not None
    return row.gone_at


def _delivery_error(blog: Blog, delivery: str) -> str:
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid(delivery))
    assert record is not None
    return record.error or ""


def test_missing_refused_and_too_big_images_are_warnings_naming_the_article_and_the_path(
    blog: Blog, assets: RecordingStore
) -> None:
    body = "![a](/images/missing.png) ![b](/images/logo.svg) ![c](/images/notes.png)"
    blog.commit(
        {
            "articles/pets.md": article("Pets", body=body),
            "images/logo.svg": images.SVG,
            "images/notes.png": b"<html><script>alert(1)</script></html>",
        }
    )
    answer = push(blog, "d-1")
    # THEN the article is served, its sources left as written, and the delivery says why
    assert answer["failed"] == 0
    assert image_sources(blog, "pets") == ["/images/missing.png", "/images/logo.svg", "/images/notes.png"]
    error = _delivery_error(blog, "d-1")
    assert "articles/pets.md" in error
    assert "/images/missing.png: no such file" in error
    assert "images/logo.svg: SVG is not served" in error
    assert "images/notes.png: not a PNG, JPEG, GIF, WebP or AVIF image" in error
    assert assets.puts == []


def test_a_replaced_image_moves_the_updated_at_of_the_articles_showing_it(
    blog: Blog, assets: RecordingStore
) -> None:
    blog.commit({"articles/pets.md": PETS, "articles/other.md": article("Other"), "images/cat.png": RED})
    push(blog, "d-1")
    before = {a["slug"]: a["updatedAt"] for a in blog.articles()}

    # WHEN the image is replaced, the article's file untouched
    blog.commit({"images/cat.png": BLUE})
    push(blog, "d-2")

    # THEN the article's HTML points at the new image, and its updatedAt says it changed (the other's not)
    assert image_sources(blog, "pets")[0] == f"/assets/{key_of(BLUE)}"
    after = {a["slug"]: a["updatedAt"] for a in blog.articles()}
    assert after["pets"] > before["pets"]
    assert after["other"] == before["other"]


def test_every_image_warning_names_the_image_as_the_article_writes_it(
    blog: Blog, assets: RecordingStore
) -> None:
    # GIVEN an article naming its images relatively, as many blogs do
    body = "![a](../images/missing.png) ![b](../images/logo.svg)"
    blog.commit({"articles/pets.md": article("Pets", body=body), "images/logo.svg": images.SVG})

    push(blog, "d-1")

    # THEN each warning starts with the source as written (one spelling), the repository path in brackets
    warnings = [line for line in _delivery_error(blog, "d-1").split("; ") if "image " in line]
    named = re.findall(r"image (\S+): ", _delivery_error(blog, "d-1"))
    assert named == ["../images/missing.png", "../images/logo.svg"], warnings
    assert "image ../images/missing.png: no such file in the repository (images/missing.png)" in (
        _delivery_error(blog, "d-1")
    )


def test_an_image_over_the_cap_is_never_downloaded(make_blog: Callable[..., Blog], tmp_path: Path) -> None:
    blog = make_blog()
    blog.settings = Settings(**{**blog.settings.__dict__, "asset_max_bytes": 64})
    blog.asset_store = RecordingStore(tmp_path / "stored")
    big = images.png() + b"\x00" * 100
    blog.commit({"articles/pets.md": article("Pets", body="![big](/images/big.png)"), "images/big.png": big})
    push(blog, "d-1")
    assert blob_requests(blog, big) == 0 and blog.asset_store.puts == []
    error = _delivery_error(blog, "d-1")
    assert f"images/big.png: {len(big)} bytes, over the 64-byte limit" in error


def test_a_file_outside_the_images_folder_is_stored_when_an_article_points_at_it(
    blog: Blog, assets: RecordingStore
) -> None:
    blog.commit(
        {"articles/pets.md": article("Pets", body="![cat](./pics/cat.png)"), "articles/pics/cat.png": RED}
    )
    push(blog, "d-1")
    assert image_sources(blog, "pets") == [f"/assets/{key_of(RED)}"]
    assert assets.puts == [key_of(RED)]


def test_the_scheduled_sweep_deletes_an_unused_image_after_the_grace_period(
    blog: Blog, assets: RecordingStore, hook_deliveries: HookDeliveries
) -> None:
    # GIVEN an image deleted from the repository and from the only article that showed it
    blog.commit({"articles/pets.md": PETS, "images/cat.png": RED})
    push(blog, "d-1")
    blog.commit({"images/cat.png": None, "articles/pets.md": article("Pets", body="No picture.")})
    push(blog, "d-2")
    services = blog.lambda_app().extensions["blog_api"]
    # WHEN the schedule's sweep runs a day later, then eight days later
    run_scheduled(services, NullMetrics(), now=datetime.now(UTC) + timedelta(days=1))
    assert assets.deletes == []
    run_scheduled(services, NullMetrics(), now=datetime.now(UTC) + timedelta(days=8))
    # THEN only the second deletes it
    assert assets.deletes == [key_of(RED)]


def test_with_article_asset_base_url_set_images_are_left_to_that_host(
    make_blog: Callable[..., Blog], tmp_path: Path
) -> None:
    blog = make_blog()
    blog.settings = Settings(**{**blog.settings.__dict__, "asset_base_url": "https://cdn.example.com/blog"})
    blog.asset_store = RecordingStore(tmp_path / "stored")
    blog.commit({"articles/pets.md": PETS, "images/cat.png": RED})
    push(blog, "d-1")
    assert image_sources(blog, "pets")[0] == "https://cdn.example.com/blog/images/cat.png"
    assert blog.asset_store.puts == [] and blob_requests(blog, RED) == 0


def test_images_past_the_per_sync_cap_wait_for_the_next_push(
    make_blog: Callable[..., Blog], tmp_path: Path
) -> None:
    blog = make_blog()
    blog.settings = Settings(**{**blog.settings.__dict__, "asset_push_max_bytes": len(RED) + 10})
    blog.asset_store = RecordingStore(tmp_path / "stored")
    body = "![a](/images/a.png) ![b](/images/b.png)"
    blog.commit({"articles/pets.md": article("Pets", body=body), "images/a.png": RED, "images/b.png": BLUE})
    # WHEN a push brings more image bytes than one sync may download
    push(blog, "d-1")
    # THEN one image is stored, the other is a warning, and the article shows what is stored
    assert blog.asset_store.puts == [key_of(RED)]
    assert "images/b.png: not stored yet" in _delivery_error(blog, "d-1")
    assert image_sources(blog, "pets") == [f"/assets/{key_of(RED)}", "/images/b.png"]
    # WHEN the next push comes
    blog.commit({"README.md": b"touched\n"})
    push(blog, "d-2")
    # THEN the rest is stored and the article shows both
    assert blog.asset_store.puts == [key_of(RED), key_of(BLUE)]
    assert image_sources(blog, "pets") == [f"/assets/{key_of(RED)}", f"/assets/{key_of(BLUE)}"]
