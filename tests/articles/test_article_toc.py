"""The table of contents travels from the Markdown to the full Article JSON (not to the list)."""

from __future__ import annotations

from tests.kit.blog_fixtures import Blog, article

BODY = "# Title\n\n## はじめに\n\ntext\n\n## はじめに\n\n### `code` here\n\n#### too deep\n"


def test_the_full_article_serves_its_toc_and_the_list_does_not(blog: Blog) -> None:
    blog.github.set_files({"articles/toc.md": article("Toc", body=BODY)})
    assert blog.push(delivery="toc").get_json()["failed"] == 0

    full = blog.client.get("/users/alice/articles/toc").get_json()
    assert full["toc"] == [
        {"level": 1, "id": "title", "text": "Title"},
        # Zenn's ids: encodeURIComponent of the heading's text, duplicates numbered
        {"level": 2, "id": "%E3%81%AF%E3%81%98%E3%82%81%E3%81%AB", "text": "はじめに"},
        {"level": 2, "id": "%E3%81%AF%E3%81%98%E3%82%81%E3%81%AB-1", "text": "はじめに"},
        {"level": 3, "id": "code-here", "text": "code here"},
    ]
    for entry in full["toc"]:
        assert f'id="{entry["id"]}"' in full["contentHtml"]
    listed = blog.client.get("/users/alice/articles").get_json()["articles"]
    assert [a["slug"] for a in listed] == ["toc"] and "toc" not in listed[0]


def test_an_edit_rewrites_the_toc(blog: Blog) -> None:
    blog.github.set_files({"articles/toc.md": article("Toc", body="## One")})
    blog.push(delivery="one")
    blog.github.set_files({"articles/toc.md": article("Toc", body="## Two")})
    blog.push(delivery="two")
    toc = blog.client.get("/users/alice/articles/toc").get_json()["toc"]
    assert toc == [{"level": 2, "id": "two", "text": "Two"}]
