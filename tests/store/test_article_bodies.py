"""Article bodies apart: the Markdown, HTML and table of contents live in ``article_bodies``, one row per
article. A push's index, the list pages, the tag facets and the sitemap never name that table (TiDB
reads a row whole, so reading it would read every body); an article's page and the feed's content
read it. Writes put both rows in one transaction, a body only when it changed; deleting a user takes
both. Migration step 7 moves the bodies of a database that holds them in its article rows, in place,
in bounded rounds, and running it again changes nothing. On SQLite and MariaDB."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import peewee

from function.articles.toc import TocEntry
from function.store.backends import is_mysql
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.article_bodies import separate_bodies
from function.store.migrations.legacy import ArticleBefore7
from function.store.migrations.operations import Migration
from function.store.migrations.runner import migrate
from function.store.migrations.steps import STEPS
from function.store.migrations.version import read_version
from function.store.models import Article, ArticleBody, User
from function.store.records import ArticleView
from tests.kit.blog_fixtures import USER, Blog
from tests.kit.blog_fixtures import article as blog_article
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.old_databases import as_before_bodies_apart
from tests.kit.statements import count_statements

BODIES = "article_bodies"
STEP = 7


def seeded(store: PeeweeStore, count: int = 7) -> int:
    """A user with ``count`` published articles, tagged, each body of its own size, one with a toc."""
    user = store.users.add_user("alice", "a@example.com", 1)
    articles = [
        article(f"a{i}", body=f"Body {i} " + "ことば" * (40 * i), tags=("tech/aws", f"t{i % 3}"))
        for i in range(count)
    ]
    articles[2] = replace(articles[2], toc=(TocEntry(2, "intro", "Intro"),))
    apply_as_worker(store, user.id, articles, [], T0)
    return user.id


def full(view: ArticleView) -> tuple[Any, ...]:
    return (view.slug, view.content, view.content_html, view.toc, view.tags, view.updated_at)


def served(store: PeeweeStore) -> dict[str, Any]:
    """Everything the read routes take from the store, bodies included."""
    feed = store.reads.published_articles("alice") or []
    page = store.reads.published_page("alice", limit=100)
    one = store.reads.published_article("alice", "a2")
    return {
        "feed": [full(view) for view in feed],
        "page": [(v.slug, v.title, v.tags) for v in page.articles] if page else None,
        "one": full(one) if one else None,
        "sitemap": store.reads.sitemap_entries("alice"),
        "facets": sorted((sorted(s), n) for s, n in store.reads.tag_facets("alice") or []),
    }


def test_the_index_lists_facets_and_sitemap_never_name_the_body_table(store: PeeweeStore) -> None:
    # GIVEN a user's articles, synced
    user_id = seeded(store)

    # WHEN the push's index, each list, the facets, the sitemap and the cards are read
    with count_statements(store.db) as index_reads:
        index = store.reconcile.load_index(user_id)
        page = store.reads.published_page("alice", limit=3)
        numbered = store.reads.numbered_page("alice", page=2, per_page=3, tag="tech/aws")
        facets = store.reads.tag_facets("alice")
        sitemap = store.reads.sitemap_entries("alice")
        count = store.reads.served_count("alice")
        paths = store.reads.published_tag_paths("alice")
        cards = store.reads.article_cards(user_id, ["a1", "a2"])

    # THEN they answered, and not one of their statements names the body table
    assert len(index) == 7 and count == 7 and len(cards) == 2 and paths
    assert page is not None and [a.slug for a in page.articles] and page.articles[0].content == ""
    assert numbered is not None and numbered.total == 7 and len(numbered.articles) == 3
    assert facets and sitemap and len(sitemap) == 7
    assert index_reads.statements
    assert [s for s in index_reads.statements if BODIES in s] == []

    # AND an article's page and the feed read it, and serve the bodies
    with count_statements(store.db) as body_reads:
        one = store.reads.published_article("alice", "a2")
        feed = store.reads.published_articles("alice", limit=20)
    # (each: its articles with their bodies, then their tags)
    assert [BODIES in s for s in body_reads.statements] == [True, False, True, False]
    assert one is not None and one.content.startswith("Body 2 ") and one.content_html.startswith("<p>Body 2")
    assert one.toc == ({"level": 2, "id": "intro", "text": "Intro"},)
    assert feed is not None and {a.slug: a.content for a in feed}["a5"].startswith("Body 5 ")


def test_a_write_puts_row_and_body_in_one_transaction(store: PeeweeStore) -> None:
    # GIVEN synced articles
    user_id = seeded(store, count=4)

    # WHEN a push gives one edited and a new one
    given = [article("a1", body="edited", tags=("tech/aws", "t1")), article("new", body="fresh")]
    with count_statements(store.db) as seen:
        result = apply_as_worker(store, user_id, given, [], at(1))

    # THEN their body rows are written in the transaction that writes their rows, and served
    body_writes = [s for s in seen.statements if s.startswith("INSERT") and BODIES in s]
    assert len(body_writes) == 1 and result.written == 2
    values = body_writes[0].split(" VALUES ")[1].split(" ON ")[0]
    assert values.count("), (") == 1  # two rows: the edited article's body and the new one's
    begin = next(i for i, s in enumerate(seen.statements) if s.startswith("BEGIN"))
    commit = next(i for i, s in enumerate(seen.statements) if s == "COMMIT")
    assert begin < seen.statements.index(body_writes[0]) < commit
    stored = {a.slug: a.content for a in store.reads.published_articles("alice") or []}
    assert stored["a1"] == "edited" and stored["new"] == "fresh" and stored["a3"].startswith("Body 3 ")

    # AND deleting the user takes every article's body with its row
    User.delete().where(User.id == user_id).bind(store.db).execute()
    assert ArticleBody.select().bind(store.db).count() == 0
    assert Article.select().bind(store.db).count() == 0


def test_step_7_moves_a_synced_blogs_bodies_in_bounded_rounds_and_serves_the_same(store: PeeweeStore) -> None:
    # GIVEN a synced blog, brought back to how a version before the step held it (bodies in the rows)
    db = store.db
    seeded(store)
    before = served(store)
    as_before_bodies_apart(db)
    assert BODIES not in db.get_tables() and read_version(db) == STEP - 1

    # WHEN the step copies at most three articles, or 1 KB of bodies, a round
    with count_statements(db) as seen:
        copied = separate_bodies(Migration(db), per_round=3, round_bytes=1024)

    # THEN every body was copied, in rounds that stay in their bounds, each committed on its own on
    # MySQL/TiDB, and the old columns are gone
    assert copied == 7
    rounds = [s for s in seen.statements if s.startswith("INSERT") and BODIES in s]
    # Bodies grow by 120 bytes of text an article: 1 KB holds at most the first few, then one each.
    assert 3 < len(rounds) <= 7
    if is_mysql(db):
        assert len(seen.matching("COMMIT")) >= len(rounds)
    assert {c.name for c in db.get_columns("articles")}.isdisjoint({"content", "content_html", "toc"})
    assert served(store) == before

    # AND running it again (a step stopped before its record) copies nothing and changes nothing
    with count_statements(db) as again:
        assert separate_bodies(Migration(db)) == 0
    assert [s for s in again.statements if s.startswith(("INSERT", "ALTER"))] == []
    assert served(store) == before


def test_step_7_stopped_half_way_resumes_after_the_rounds_it_did(store: PeeweeStore) -> None:
    # GIVEN a blog before the step, and a first run that copied the first three bodies, then died
    db = store.db
    seeded(store)
    before = served(store)
    as_before_bodies_apart(db)
    ids: Any = Article.select(Article.id).order_by(Article.id).limit(3).tuples().bind(db)
    first_ids = [row[0] for row in ids]
    peewee.SchemaManager(ArticleBody, db).create_all(safe=True)
    old = ArticleBefore7
    rows = old.select(old.id, old.content, old.content_html, old.toc).where(old.id <= max(first_ids))
    fields = [ArticleBody.article, ArticleBody.content, ArticleBody.content_html, ArticleBody.toc]
    ArticleBody.insert_from(rows, fields).bind(db).execute()

    # WHEN the migration runs
    report = migrate(db)

    # THEN step 7 ran (and the steps after it), it copied the rest once (a body copied twice would
    # break the key), and the blog serves what it served
    assert report.applied == tuple((n, name) for n, name, _ in STEPS if n >= STEP)
    assert ArticleBody.select().bind(db).count() == Article.select().bind(db).count() == 7
    assert served(store) == before


def test_between_the_deploy_and_step_7_only_the_pages_with_bodies_wait_for_the_migration(
    blog: Blog,
) -> None:
    # GIVEN a synced blog whose database has not been through step 7 yet (this version just deployed)
    blog.commit({"articles/first.md": blog_article("First", body="Hello **there**.")})
    assert blog.push().get_json()["failed"] == 0
    with connection(blog.db):
        as_before_bodies_apart(blog.db)

    # WHEN readers ask for the list and for the article
    listed = blog.client.get(f"/users/{USER}/articles")
    page = blog.client.get(f"/users/{USER}/articles/first")

    # THEN the list is served (it never reads a body), the article answers a retryable 503 that says
    # what to run, and once migrated it is served as it was written
    assert listed.status_code == 200 and [a["slug"] for a in listed.get_json()["articles"]] == ["first"]
    assert page.status_code == 503 and "init-db" in page.get_json()["message"]
    with connection(blog.db):
        migrate(blog.db)
    served_now = blog.client.get(f"/users/{USER}/articles/first").get_json()
    assert "<strong>there</strong>" in served_now["contentHtml"]
