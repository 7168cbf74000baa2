"""Image URLs are composed when an answer is served, not when the repository is synced: a new ``ASSET_URL``
(or asset domain) changes every article, chapter, book cover and feed at once, with no sync, and their
ETags with them; a sync run without the variable changes nothing readers get. On SQLite and MariaDB."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any
from xml.etree import ElementTree as ET

from flask.testing import FlaskClient

from function.app import create_app
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.services import Services
from function.store.models import Article, ArticleBody, Book, BookChapter
from tests.kit import images
from tests.kit.blog_checks import stored
from tests.kit.blog_fixtures import USER, Blog, article

RED, BLUE = images.png((255, 0, 0)), images.png((0, 0, 255))
SITE = "https://blog.example.com"
FILES: dict[str, bytes | None] = {
    "articles/pets.md": article(
        "Pets", body="![cat](/images/cat.png)\n\n![dog](https://example.com/dog.png)"
    ),
    "images/cat.png": RED,
    "books/aws-field-notes/config.yaml": b"title: Notes\nsummary: S\ntopics: [aws]\npublished: true\n"
    b"chapters:\n  - intro\n",
    "books/aws-field-notes/intro.md": b"---\ntitle: Intro\n---\n\n![cat](/images/cat.png)\n",
    "books/aws-field-notes/cover.png": BLUE,
}
ATOM = "{http://www.w3.org/2005/Atom}"


def key_of(data: bytes) -> str:
    return asset_key(content_sha256(data), PNG)


def served_with(blog: Blog, **settings: Any) -> FlaskClient:
    """A read API on the blog's database with ``settings`` changed: a redeploy with new variables."""
    services = Services(
        replace(blog.settings, **settings), source=blog.source, database=blog.db, asset_store=blog.asset_store
    )
    return create_app(services=services).test_client()


def synced(blog: Blog) -> None:
    blog.commit(FILES)
    answer = blog.push()
    assert answer.status_code == 200 and answer.get_json()["failed"] == 0, answer.get_json()


def image_sources(html: str) -> list[str]:
    return re.findall(r'<img [^>]*?src="([^"]*)"', html)


def what_readers_get(client: FlaskClient) -> dict[str, Any]:
    """Every image URL a reader is handed: the article's, the chapter's, the book's cover in the book,
    the list of books and the chapter's book, and the feed's."""
    article_ = client.get(f"/users/{USER}/articles/pets").get_json()
    chapter = client.get(f"/users/{USER}/books/aws-field-notes/chapters/intro").get_json()
    book = client.get(f"/users/{USER}/books/aws-field-notes").get_json()
    books = client.get(f"/users/{USER}/books").get_json()["books"]
    feed = ET.fromstring(client.get(f"/users/{USER}/feed.xml").data)  # noqa: S314 - our own answer
    contents = [entry.findtext(f"{ATOM}content") or "" for entry in feed.iter(f"{ATOM}entry")]
    return {
        "article": image_sources(article_["contentHtml"]),
        "chapter": image_sources(chapter["contentHtml"]),
        "covers": {book["cover"], books[0]["cover"], chapter["book"]["cover"]},
        "feed": [src for html in contents for src in image_sources(html)],
    }


def stored_html(blog: Blog) -> tuple[str, str, str | None]:
    article_ = (
        ArticleBody.select(ArticleBody.content_html)
        .join(Article)
        .where(Article.slug == "pets")
        .bind(blog.db)
        .scalar()
    )
    chapter = BookChapter.select(BookChapter.content_html).bind(blog.db).scalar()
    cover = Book.select(Book.cover_url).bind(blog.db).scalar()
    return article_, chapter, cover


def test_a_new_asset_url_changes_every_image_url_served_without_a_sync(blog: Blog) -> None:
    # GIVEN a repository synced with the default asset URL (the app's own /assets)
    synced(blog)
    cat, cover = key_of(RED), key_of(BLUE)
    before = stored_html(blog)
    at_first = what_readers_get(served_with(blog, site_url=SITE))
    assert at_first == {
        "article": [f"/assets/{cat}", "https://example.com/dog.png"],
        "chapter": [f"/assets/{cat}"],
        "covers": {f"/assets/{cover}"},
        # A feed reader has no page to resolve a path against: the feed's URLs are absolute
        "feed": [f"{SITE}/assets/{cat}", "https://example.com/dog.png"],
    }

    # WHEN the function is deployed with the images on an asset domain, and later on another, and no
    # push comes in between
    for base in ("https://d111.cloudfront.net", "https://images.example.org/blog"):
        served = what_readers_get(served_with(blog, site_url=SITE, asset_url=base))

        # THEN every answer points at the new base at once
        assert served == {
            "article": [f"{base}/{cat}", "https://example.com/dog.png"],
            "chapter": [f"{base}/{cat}"],
            "covers": {f"{base}/{cover}"},
            "feed": [f"{base}/{cat}", "https://example.com/dog.png"],
        }
    # AND nothing stored changed: the HTML keeps the references, no URL
    assert stored_html(blog) == before
    assert before[0].count(f'src="asset:{cat}"') == 1 and before[2] == f"asset:{cover}"


def test_the_etag_follows_the_composed_answer(blog: Blog) -> None:
    synced(blog)
    old = served_with(blog, site_url=SITE)
    new = served_with(blog, site_url=SITE, asset_url="https://d111.cloudfront.net")
    for path in (
        f"/users/{USER}/articles/pets",
        f"/users/{USER}/books/aws-field-notes",
        f"/users/{USER}/books",
        f"/users/{USER}/books/aws-field-notes/chapters/intro",
        f"/users/{USER}/feed.xml",
    ):
        # GIVEN a cache holding an answer served with the old asset URL
        etag = old.get(path).headers["ETag"]
        # WHEN it revalidates against the function served with the new one
        answer = new.get(path, headers={"If-None-Match": etag})
        # THEN it gets the new answer, whose own tag revalidates
        assert answer.status_code == 200 and "d111.cloudfront.net" in answer.get_data(as_text=True), path
        assert answer.headers["ETag"] != etag
        assert new.get(path, headers={"If-None-Match": answer.headers["ETag"]}).status_code == 304


def test_a_rebuild_without_the_variable_changes_nothing_readers_get(blog: Blog) -> None:
    # GIVEN a blog synced and served with its asset domain set
    cdn = "https://d111.cloudfront.net"
    blog.settings = replace(blog.settings, asset_url=cdn, site_url=SITE)
    synced(blog)
    before_answers = what_readers_get(blog.client)
    before_rows, before_times = stored_html(blog), {s: a.updated_at for s, a in stored(blog).items()}
    assert before_answers["article"][0] == f"{cdn}/{key_of(RED)}"

    # WHEN an operator rebuilds from a shell without ASSET_URL (the app's own /assets then)
    laptop = Services(
        replace(blog.settings, asset_url="/assets"),
        source=blog.source,
        database=blog.db,
        asset_store=blog.asset_store,
    )
    with laptop.store() as store:
        summary = laptop.worker(store).sync_user(USER, rebuild=True)
    assert summary.failed == 0 and summary.fetched >= 2

    # THEN every file was rendered again to the same stored HTML, no article moved, and readers still
    # get the asset domain's URLs
    assert stored_html(blog) == before_rows
    assert {s: a.updated_at for s, a in stored(blog).items()} == before_times
    assert not summary.changes
    assert what_readers_get(blog.client) == before_answers
