"""Repository images in a real sync: served against ARTICLE_ASSET_BASE_URL, else a warning in the output."""

from __future__ import annotations

from dataclasses import replace

from function.worker.sync import Worker
from tests.kit.blog_fixtures import USER, Blog, article

BODY = "![cat](/images/cat.png)\n\n![dog](https://example.com/dog.png)"


def test_without_a_base_url_the_sync_warns_and_keeps_the_source(blog: Blog) -> None:
    blog.commit({"articles/pets.md": article("Pets", body=BODY), "articles/plain.md": article("Plain")})
    with blog.store() as store:
        summary = Worker(store, blog.source).sync_user(USER, repository=None)
    assert summary.failed == 0
    assert len(summary.warnings) == 1
    path, message = summary.warnings[0].path, summary.warnings[0].message
    assert path == "articles/pets.md" and "/images/cat.png" in message and "ARTICLE_ASSET_BASE_URL" in message
    html = blog.client.get("/users/alice/articles/pets").get_json()["contentHtml"]
    assert 'src="/images/cat.png"' in html


def test_with_a_base_url_repository_images_point_there(blog: Blog) -> None:
    base = "https://raw.example.com/alice/blog/main"
    blog.settings = replace(blog.settings, asset_base_url=base)
    blog.commit({"articles/pets.md": article("Pets", body=BODY)})
    with blog.store() as store:
        summary = Worker(store, blog.source, asset_base_url=base).sync_user(USER, repository=None)
    assert summary.warnings == []
    html = blog.client.get("/users/alice/articles/pets").get_json()["contentHtml"]
    assert 'src="https://raw.example.com/alice/blog/main/images/cat.png"' in html
    assert 'src="https://example.com/dog.png"' in html
