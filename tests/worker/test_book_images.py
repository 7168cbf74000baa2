"""A Zenn book's cover and its chapters' images reach readers as an article's images do: stored once in
the asset store, served from their asset URL, and kept by the sweep while a book still shows them."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from function.assets.folder import FolderAssetStore
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.assets.sweep import collect_assets
from function.settings import Settings
from function.sources.gitsha import git_blob_sha
from function.store.asset_records import AssetRecords
from tests.kit import images
from tests.kit.blog_fixtures import Blog, article
from tests.kit.statements import count_statements

RED, BLUE = images.png((255, 0, 0)), images.png((0, 0, 255))
CONFIG = b"title: Field notes\nsummary: Notes\ntopics: [aws]\npublished: true\nchapters:\n  - intro\n"
CHAPTER = b"---\ntitle: Intro\n---\n\nHello.\n"


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


def book_files(cover: bytes | None = RED) -> dict[str, bytes | None]:
    return {
        "articles/hello.md": article("Hello"),
        "books/lambda-field-notes/config.yaml": CONFIG,
        "books/lambda-field-notes/intro.md": CHAPTER,
        "books/lambda-field-notes/cover.png": cover,
    }


def key_of(data: bytes) -> str:
    return asset_key(content_sha256(data), PNG)


def listed_cover(blog: Blog) -> Any:
    answer = blog.client.get("/users/alice/books")
    assert answer.status_code == 200, answer.get_json()
    (book,) = answer.get_json()["books"]
    return book["cover"]


def blob_requests(blog: Blog, data: bytes) -> int:
    sha = git_blob_sha(data)
    return sum(1 for r in blog.github.requests if r.kind == "blob" and sha in r.path)


def push(blog: Blog, delivery: str) -> dict[str, Any]:
    answer = blog.push(delivery=delivery)
    assert answer.status_code == 200, answer.get_json()
    body: dict[str, Any] = answer.get_json()
    assert body["failed"] == 0, body
    return body


def test_a_books_cover_is_served_from_its_asset_url(blog: Blog, assets: RecordingStore) -> None:
    # GIVEN a repository with a book whose folder holds a cover.png
    blog.commit(book_files())
    # WHEN it is pushed
    push(blog, "d-1")
    # THEN the book lists its cover at the asset URL, which serves the PNG
    assert listed_cover(blog) == f"/assets/{key_of(RED)}"
    book = blog.client.get("/users/alice/books/lambda-field-notes").get_json()
    assert book["cover"] == f"/assets/{key_of(RED)}"
    chapter = blog.client.get("/users/alice/books/lambda-field-notes/chapters/intro").get_json()
    assert chapter["book"]["cover"] == f"/assets/{key_of(RED)}"
    served = blog.client.get(f"/assets/{key_of(RED)}")
    assert served.status_code == 200 and served.data == RED
    assert served.headers["Content-Type"] == "image/png"
    assert assets.puts == [key_of(RED)] and blob_requests(blog, RED) == 1


def test_a_second_push_downloads_nothing_and_writes_nothing(blog: Blog, assets: RecordingStore) -> None:
    blog.commit(book_files())
    push(blog, "d-1")
    blog.github.reset_records()
    # WHEN the same tree is pushed again (a no-op push)
    blog.commit({"README.md": b"touched\n"})
    with count_statements(blog.db) as seen:
        push(blog, "d-2")
    # THEN the cover is neither downloaded nor stored again, no book or image row is written
    assert blob_requests(blog, RED) == 0 and assets.puts == [key_of(RED)]
    written = [s for s in seen.statements if s.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert not [s for s in written if "book" in s.lower() or "asset" in s.lower()], written
    assert listed_cover(blog) == f"/assets/{key_of(RED)}"


def test_a_changed_cover_is_stored_under_its_new_key(blog: Blog, assets: RecordingStore) -> None:
    blog.commit(book_files())
    push(blog, "d-1")
    # WHEN only the cover changes
    blog.commit({"books/lambda-field-notes/cover.png": BLUE})
    push(blog, "d-2")
    # THEN the book points at the new bytes' key
    assert listed_cover(blog) == f"/assets/{key_of(BLUE)}"
    assert assets.puts == [key_of(RED), key_of(BLUE)]


def test_the_sweep_keeps_a_cover_a_book_still_shows(blog: Blog, assets: RecordingStore) -> None:
    blog.commit(book_files())
    push(blog, "d-1")
    # WHEN the cover file is deleted while the book breaks (its config no longer parses): the book is
    # left as it was, still showing the cover
    blog.commit(
        {"books/lambda-field-notes/cover.png": None, "books/lambda-field-notes/config.yaml": b"title: [\n"}
    )
    answer = blog.push(delivery="d-2").get_json()
    assert answer["failed"] == 1
    assert listed_cover(blog) == f"/assets/{key_of(RED)}"
    records = AssetRecords(blog.db)
    later = datetime.now(UTC) + timedelta(days=30)
    # THEN the sweep keeps it however late it runs
    with blog.store():
        assert collect_assets(records, assets, later, timedelta(days=7)).deleted == []
    # WHEN the book's folder is deleted (the book is archived)
    blog.commit({"books/lambda-field-notes/config.yaml": None, "books/lambda-field-notes/intro.md": None})
    push(blog, "d-3")
    # THEN the cover is collected after the grace period
    with blog.store():
        assert collect_assets(records, assets, later, timedelta(days=7)).deleted == [key_of(RED)]
    assert blog.client.get(f"/assets/{key_of(RED)}").status_code == 404


def test_without_the_asset_store_the_cover_is_its_repository_path(
    make_blog: Callable[..., Blog], tmp_path: Path
) -> None:
    # GIVEN images left to another host (ARTICLE_ASSET_BASE_URL): blog-api stores none
    blog = make_blog()
    blog.settings = Settings(**{**blog.settings.__dict__, "asset_base_url": "https://cdn.example.com/blog"})
    blog.asset_store = RecordingStore(tmp_path / "stored")
    blog.commit(book_files())
    push(blog, "d-1")
    # THEN the cover is the repository path, as before, and nothing was stored
    assert listed_cover(blog) == "books/lambda-field-notes/cover.png"
    assert blog.asset_store.puts == [] and blob_requests(blog, RED) == 0


GREEN = images.png((0, 255, 0))  # not the cover's bytes, which share its key
PICTURED = b"---\ntitle: Intro\n---\n\n![cat](/images/cat.png)\n"


def chapter_sources(blog: Blog) -> list[str]:
    answer = blog.client.get("/users/alice/books/lambda-field-notes/chapters/intro")
    assert answer.status_code == 200, answer.get_json()
    return re.findall(r'<img [^>]*?src="([^"]*)"', answer.get_json()["contentHtml"])


def test_a_chapters_image_is_served_from_its_asset_url_and_follows_a_new_image(
    blog: Blog, assets: RecordingStore
) -> None:
    # GIVEN a book whose chapter shows an image of the images folder
    blog.commit({**book_files(), "books/lambda-field-notes/intro.md": PICTURED, "images/cat.png": BLUE})
    push(blog, "d-1")
    # THEN the chapter's image points at the asset URL, which serves it
    assert chapter_sources(blog) == [f"/assets/{key_of(BLUE)}"]
    assert blog.client.get(f"/assets/{key_of(BLUE)}").data == BLUE
    # WHEN only the image changes
    blog.commit({"images/cat.png": GREEN})
    push(blog, "d-2")
    # THEN the chapter is rendered again and points at the new bytes' key
    assert chapter_sources(blog) == [f"/assets/{key_of(GREEN)}"]
    # WHEN the image file is deleted while the chapter still shows it
    blog.commit({"images/cat.png": None})
    push(blog, "d-3")
    later = datetime.now(UTC) + timedelta(days=30)
    records = AssetRecords(blog.db)
    # THEN the sweep keeps it, however late it runs
    with blog.store():
        assert collect_assets(records, assets, later, timedelta(days=7)).deleted == []
    assert chapter_sources(blog) == [f"/assets/{key_of(GREEN)}"]
    # WHEN the chapter stops showing it
    blog.commit({"books/lambda-field-notes/intro.md": CHAPTER})
    push(blog, "d-4")
    # THEN it is collected after the grace period
    assert chapter_sources(blog) == []
    with blog.store():
        assert collect_assets(records, assets, later, timedelta(days=7)).deleted == [key_of(GREEN)]
