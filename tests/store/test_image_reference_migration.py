"""Migration step 6 on a database holding what earlier versions stored: the asset URLs of that time in the
HTML of articles and chapters and in the books' covers become the references this version stores, with
the hashes that go with them, in bounded rounds, and running it again changes nothing. The blog then
serves the URLs of its current ASSET_URL, and its next sync finds nothing new for readers. On SQLite and
MariaDB."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import peewee

from function.app import create_app
from function.articles.books import BookConfig, book_hash
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.services import Services
from function.store.connection import connection
from function.store.migrations.runner import migrate
from function.store.migrations.steps import STEPS
from function.store.migrations.stored_images import image_urls_to_references
from function.store.migrations.version import SchemaVersion, record_version
from function.store.models import Article, Book, BookChapter
from function.store.write_plan import output_hash
from tests.kit import images
from tests.kit.blog_checks import stored
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.statements import count_statements

RED, BLUE, GREEN = images.png((255, 0, 0)), images.png((0, 0, 255)), images.png((0, 255, 0))
OLD_BASE = "https://d111.cloudfront.net"
FILES: dict[str, bytes | None] = {
    "articles/pets.md": article("Pets", body="![cat](/images/cat.png) ![dog](https://example.com/dog.png)"),
    "articles/garden.md": article("Garden", body="![leaf](/images/leaf.png)\n\n![cat](/images/cat.png)"),
    "articles/plain.md": article("Plain"),
    "articles/links.md": article("Links", body='[cat](/images/cat.png) `<img src="/assets/x">`'),
    "articles/more.md": article("More", body="![cat](../images/cat.png)"),
    "images/cat.png": RED,
    "images/leaf.png": GREEN,
    "books/aws-field-notes/config.yaml": b"title: Notes\nsummary: S\ntopics: [aws]\npublished: true\n"
    b"chapters:\n  - intro\n  - next\n",
    "books/aws-field-notes/intro.md": b"---\ntitle: Intro\n---\n\n![cat](/images/cat.png)\n",
    "books/aws-field-notes/next.md": b"---\ntitle: Next\n---\n\nNo image.\n",
    "books/aws-field-notes/cover.png": BLUE,
}
LAST = STEPS[-1][0]
# This step's place: later steps run after it, and a database of the version before it lacks them too.
PLACE = next(i for i, (_, _, run) in enumerate(STEPS) if run.__name__ == "image_references")


def key_of(data: bytes) -> str:
    return asset_key(content_sha256(data), PNG)


def tuples(query: Any, db: Any) -> list[tuple[Any, ...]]:
    return list(query.tuples().bind(db))


def rows(blog: Blog) -> dict[str, Any]:
    """What the step may change: HTML and hashes of articles and chapters, covers and books' hashes."""
    articles = tuples(Article.select(Article.slug, Article.content_html, Article.output_hash), blog.db)
    chapters = tuples(
        BookChapter.select(BookChapter.slug, BookChapter.content_html, BookChapter.output_hash), blog.db
    )
    books = tuples(Book.select(Book.slug, Book.cover_url, Book.content_hash), blog.db)
    return {
        "articles": {slug: (html, hashed) for slug, html, hashed in articles},
        "chapters": {slug: (html, hashed) for slug, html, hashed in chapters},
        "books": {slug: (cover, hashed) for slug, cover, hashed in books},
    }


def as_an_earlier_version_stored_it(blog: Blog, base: str) -> None:
    """The rows as the version before this step wrote them, its ASSET_URL being ``base``: each reference
    an asset URL, each hash made from that, and the database at the step before."""
    db = blog.db
    for model in (Article, BookChapter):
        for row_id, html, toc in tuples(model.select(model.id, model.content_html, model.toc), db):
            old = html.replace('src="asset:', f'src="{base}/')
            model.update(content_html=old, output_hash=output_hash(old, toc or "[]")).where(
                model.id == row_id
            ).bind(db).execute()
    for book_id, cover, config in tuples(Book.select(Book.id, Book.cover_url, Book.config), db):
        url = cover.replace("asset:", f"{base}/")
        chapters = tuples(
            BookChapter.select(BookChapter.slug, BookChapter.position, BookChapter.content_hash)
            .where(BookChapter.book == book_id)
            .order_by(BookChapter.position),
            db,
        )
        hashed = book_hash(BookConfig.from_json(config), url, chapters)
        Book.update(cover_url=url, content_hash=hashed).where(Book.id == book_id).bind(db).execute()
    # A new database records its version only; the one before this step records the step before.
    SchemaVersion.delete().where(SchemaVersion.version == LAST).bind(db).execute()
    record_version(db, *STEPS[PLACE - 1][:2])


def synced(blog: Blog) -> dict[str, Any]:
    blog.commit(FILES)
    answer = blog.push()
    assert answer.status_code == 200 and answer.get_json()["failed"] == 0, answer.get_json()
    return rows(blog)


def test_a_database_holding_asset_urls_is_migrated_to_what_this_version_stores(blog: Blog) -> None:
    # GIVEN a blog whose rows an earlier version wrote with its asset domain in them
    expected = synced(blog)
    with connection(blog.db):
        as_an_earlier_version_stored_it(blog, OLD_BASE)
    old = rows(blog)
    assert f'src="{OLD_BASE}/{key_of(RED)}"' in old["articles"]["pets"][0]
    assert old["books"]["aws-field-notes"][0] == f"{OLD_BASE}/{key_of(BLUE)}"

    # WHEN it is migrated
    with connection(blog.db):
        report = migrate(blog.db)

    # THEN this step ran (and those after it), and every row is what this version writes: references,
    # with their hashes
    assert report.applied == tuple((number, name) for number, name, _ in STEPS[PLACE:])
    assert rows(blog) == expected
    assert f'src="asset:{key_of(RED)}"' in expected["articles"]["pets"][0]
    assert 'src="https://example.com/dog.png"' in expected["articles"]["pets"][0]

    # AND served with the asset domain of now, every answer has its URLs
    served = Services(replace(blog.settings, asset_url="https://images.example.org"), database=blog.db)
    client = create_app(services=served).test_client()
    html = client.get(f"/users/{USER}/articles/garden").get_json()["contentHtml"]
    assert re.findall(r'src="([^"]*)"', html) == [
        f"https://images.example.org/{key_of(GREEN)}",
        f"https://images.example.org/{key_of(RED)}",
    ]
    cover = client.get(f"/users/{USER}/books/aws-field-notes").get_json()["cover"]
    assert cover == f"https://images.example.org/{key_of(BLUE)}"

    # AND the next sync finds nothing new for readers: no file rendered again, no article moved
    times = {slug: a.updated_at for slug, a in stored(blog).items()}
    blog.commit({"README.md": b"touched\n"})
    answer = blog.push(delivery="d-2").get_json()
    assert answer["written"] == 0 and answer["failed"] == 0, answer
    assert {slug: a.updated_at for slug, a in stored(blog).items()} == times
    assert rows(blog) == expected


def test_the_step_runs_in_bounded_rounds_and_a_second_run_changes_nothing(blog: Blog) -> None:
    # GIVEN the rows an earlier version wrote
    expected = synced(blog)
    with connection(blog.db):
        as_an_earlier_version_stored_it(blog, "/assets")

        # WHEN the step reads two rows a round and writes one row's HTML a statement
        with count_statements(blog.db) as first:
            image_urls_to_references(blog.db, per_round=2, statement_bytes=1)

        # THEN every row with an image is written once, alone, the others never
        updates = first.matching("UPDATE")
        with_images = ("pets", "garden", "more", "intro")
        assert len([s for s in updates if "content_html" in s]) == len(with_images)
        assert rows(blog) == expected

        # AND running it again (a migration stopped before its record) writes nothing
        with count_statements(blog.db) as second:
            image_urls_to_references(blog.db, per_round=2, statement_bytes=1)
        assert second.matching("UPDATE") == []
        assert rows(blog) == expected


def test_urls_of_images_blog_api_never_stored_are_left_as_they_are(blog: Blog) -> None:
    # GIVEN rows an earlier version wrote, and an author's own URL that looks like an asset key's
    synced(blog)
    stranger = f"https://example.com/{'9' * 64}.png"
    with connection(blog.db):
        as_an_earlier_version_stored_it(blog, OLD_BASE)
        html = f'<p><img src="{stranger}" alt="x"></p>\n'
        Article.update(content_html=html).where(Article.slug == "plain").bind(blog.db).execute()

        # WHEN it is migrated
        migrate(blog.db)

    # THEN that URL is still the author's
    assert rows(blog)["articles"]["plain"][0] == html
    assert peewee.Table("articles").select().bind(blog.db).count() == 5
