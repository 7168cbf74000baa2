"""Re-rendering without remembering: every stored article, chapter and book records what it was rendered
with (the render version, raw HTML, whether images are left to an asset base, the libraries' versions); no
URL is among them (images are composed when served), and the next sync after a change
renders again exactly the files stored with another fingerprint, without ``--rebuild``, and an article
keeps its updatedAt unless its HTML changed. On SQLite and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from function.articles.render_fingerprint import RENDER_VERSION, render_fingerprint
from function.sources.port import RepoFile, Snapshot
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.operations import Migration
from function.store.migrations.runner import migrate
from function.store.migrations.steps import render_fingerprints
from function.store.models import Article, ArticleBody, BookChapter
from function.store.write_plan import output_hash
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync import SyncSummary, Worker
from function.worker.sync.book_plan import PlannedBook, rendered_by_another, written_by_another
from function.worker.sync.plan import Known, Planner
from tests.kit.blog_checks import stored
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import delivery_uuid
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.kit.old_databases import make_old_database

BOOK = {
    "books/aws-field-guide/config.yaml": b'title: "Guide"\nsummary: "A guide"\ntopics: ["aws"]\n'
    b"published: true\nchapters:\n  - intro\n  - next\n",
    "books/aws-field-guide/intro.md": b'---\ntitle: "Intro"\n---\n\nHello.\n',
    "books/aws-field-guide/next.md": b'---\ntitle: "Next"\n---\n\nMore.\n',
}
FILES = {
    "articles/plain.md": article("Plain"),
    "articles/pictured.md": article("Pictured", body="![cat](/images/cat.png)\n\n<b>bold</b>"),
    "articles/third.md": article("Third"),
    **BOOK,
}


def push(blog: Blog, delivery_id: str, **options: Any) -> SyncSummary:
    """A push of the branch head through a Worker with ``options`` (a render version, settings)."""
    head = blog.github.head()
    pushed = PushRef(repository=REPO, branch="main", installation_id=INSTALLATION_ID, after=head)
    info = DeliveryInfo(delivery_id=delivery_uuid(delivery_id), event="push", received_at=datetime.now(UTC))
    with blog.store() as store:
        return Worker(store, blog.source, **options).process_push(info, pushed)


def touch(blog: Blog, n: int) -> None:
    """A commit that changes no article or book (a push after an upgrade, say)."""
    blog.commit({"README.md": f"# revision {n}\n".encode()})


def fingerprints(blog: Blog) -> set[str | None]:
    """Every fingerprint stored on articles and chapters."""
    articles: Any = Article.select(Article.render_fingerprint).tuples().bind(blog.db)
    chapters: Any = BookChapter.select(BookChapter.render_fingerprint).tuples().bind(blog.db)
    return {row[0] for row in articles} | {row[0] for row in chapters}


def test_a_new_render_version_renders_every_file_again_on_the_next_push_once(blog: Blog) -> None:
    # GIVEN a repository of three articles and a book of two chapters, synced
    blog.github.set_files(FILES)
    assert push(blog, "1").written == 4  # three articles and the book
    before = {slug: a.updated_at for slug, a in stored(blog).items()}
    chapter_before = blog.client.get("/users/alice/books/aws-field-guide/chapters/intro").get_json()
    assert fingerprints(blog) == {render_fingerprint(allow_raw_html=False, images_elsewhere=False)}

    # WHEN the code's render version changes and the next push changes no file
    touch(blog, 1)
    blog.github.reset_records()
    upgraded = push(blog, "2", render_version=RENDER_VERSION + 1)

    # THEN every article and chapter was read and rendered again (no --rebuild), their HTML being the
    # same nothing readers see moved, and the new fingerprint is recorded
    assert upgraded.fetched == 3 + 2  # the articles and the book's chapters (its config is not rendered)
    assert upgraded.failed == 0 and not upgraded.changes and not upgraded.book_changes
    assert {slug: a.updated_at for slug, a in stored(blog).items()} == before
    assert blog.client.get("/users/alice/books/aws-field-guide/chapters/intro").get_json() == chapter_before
    new = render_fingerprint(allow_raw_html=False, images_elsewhere=False, render_version=RENDER_VERSION + 1)
    assert fingerprints(blog) == {new}

    # AND the push after it renders nothing again
    touch(blog, 2)
    blog.github.reset_records()
    again = push(blog, "3", render_version=RENDER_VERSION + 1)
    assert again.fetched == 0 and blog.github.count("blob") == 0


def test_only_the_files_stored_with_another_fingerprint_are_rendered_again(blog: Blog) -> None:
    # GIVEN a synced repository, one article and one chapter of which an older version rendered
    blog.github.set_files(FILES)
    push(blog, "1")
    Article.update(render_fingerprint="0" * 16).where(Article.slug == "third").bind(blog.db).execute()
    BookChapter.update(render_fingerprint=None).where(BookChapter.slug == "next").bind(blog.db).execute()

    # WHEN a push changes no file
    touch(blog, 1)
    blog.github.reset_records()
    summary = push(blog, "2")

    # THEN only those two files were fetched and rendered again, and they now say so
    fetched = {r.path.rsplit("/", 1)[-1] for r in blog.github.requests if "/git/blobs/" in r.path}
    assert summary.fetched == 2 and len(fetched) == 2
    assert fingerprints(blog) == {render_fingerprint(allow_raw_html=False, images_elsewhere=False)}


@pytest.mark.parametrize("rebuild", [False, True])
def test_a_setting_that_changes_the_html_moves_updated_at_of_those_articles_only(
    blog: Blog, rebuild: bool
) -> None:
    # GIVEN a synced repository whose raw HTML is shown as text
    blog.github.set_files(FILES)
    push(blog, "1")
    before = stored(blog)

    # WHEN raw HTML is allowed (ARTICLE_ALLOW_RAW_HTML) and a push changes no file (or an operator
    # rebuilds)
    touch(blog, 1)
    if rebuild:
        with blog.store() as store:
            summary = Worker(store, blog.source, allow_raw_html=True).sync_user("alice", rebuild=True)
    else:
        summary = push(blog, "2", allow_raw_html=True)

    # THEN every article was rendered again, but only the one with raw HTML renders differently: its
    # updatedAt moves and the front ends hear of it; the others keep theirs
    after = stored(blog)
    assert summary.fetched >= 3 and summary.changes.updated == ["pictured"]
    assert after["pictured"].updated_at > before["pictured"].updated_at
    assert after["plain"].updated_at == before["plain"].updated_at
    assert after["third"].updated_at == before["third"].updated_at
    assert "<b>bold</b>" in blog.article("pictured")["contentHtml"]


def test_an_asset_base_is_no_input_of_the_fingerprint_only_whether_one_is_used(blog: Blog) -> None:
    # GIVEN a repository synced with its images left to one asset base
    blog.github.set_files(FILES)
    push(blog, "1", asset_base_url="https://cdn.example.com/blog")
    before = stored(blog)

    # WHEN the base changes and a push changes no file
    touch(blog, 1)
    blog.github.reset_records()
    summary = push(blog, "2", asset_base_url="https://images.example.org")

    # THEN nothing was rendered again: the stored HTML keeps the repository's paths, whatever the base
    assert summary.fetched == 0 and blog.github.count("blob") == 0
    assert stored(blog) == before
    assert fingerprints(blog) == {render_fingerprint(allow_raw_html=False, images_elsewhere=True)}
    html = (
        ArticleBody.select(ArticleBody.content_html)
        .join(Article)
        .where(Article.slug == "pictured")
        .bind(blog.db)
        .scalar()
    )
    assert '<img src="/images/cat.png" alt="cat">' in html


def test_a_different_library_version_or_setting_gives_another_fingerprint() -> None:
    base = render_fingerprint(allow_raw_html=False, images_elsewhere=False)
    assert base == render_fingerprint(allow_raw_html=False, images_elsewhere=False)
    assert len(base) == 16
    others = {
        render_fingerprint(allow_raw_html=True, images_elsewhere=False),
        render_fingerprint(allow_raw_html=False, images_elsewhere=True),
        render_fingerprint(allow_raw_html=False, images_elsewhere=False, render_version=RENDER_VERSION + 1),
    }
    assert base not in others and len(others) == 3


def test_a_database_an_earlier_version_made_renders_every_file_again_once_after_its_migration(
    db_url: str,
) -> None:
    # GIVEN the database eaf72ea made (articles, books and chapters rendered before fingerprints)
    db = open_database(db_url)
    make_old_database(db)
    fingerprint = render_fingerprint(allow_raw_html=False, images_elsewhere=False)

    # WHEN it is migrated
    with connection(db):
        migrate(db)
        store = PeeweeStore(db)
        users = [u for u in store.users.list_users() if store.reconcile.load_index(u.id)]
        assert users, "the recording has articles"
        for user in users:
            index = store.reconcile.load_index(user.id)
            html: Any = (
                Article.select(Article.slug, ArticleBody.content_html, ArticleBody.toc)
                .join(ArticleBody, on=(ArticleBody.article == Article.id))
                .where(Article.user == user.id)
            )

            # THEN each article records no fingerprint yet, and the hash of the HTML it has
            assert {a.render_fingerprint for a in index.values()} == {None}
            assert {slug: output_hash(text, toc or "[]") for slug, text, toc in html.tuples().bind(db)} == {
                slug: a.output_hash for slug, a in index.items()
            }
            # AND the next sync reads and renders every listed article again (the blobs are the same)
            listing = Snapshot("h" * 40, tuple(RepoFile(a.path, a.blob_sha) for a in index.values()))
            plan = Planner("articles", render_fingerprint=fingerprint).plan(listing, Known(index, {}))
            assert {f.path for f in plan.changed} == {a.path for a in index.values()}
            # AND every book is written again, every chapter read again
            for slug, book in store.books.load_book_index(user.id).items():
                planned = PlannedBook(slug, f"books/{slug}", {}, book)
                assert written_by_another(planned, fingerprint)
                assert rendered_by_another(planned, fingerprint) == {c.path for c in book.chapters.values()}
        # AND the step run again (stopped before its record) changes nothing more
        before = {user.id: store.reconcile.load_index(user.id) for user in users}
        render_fingerprints(Migration(db))
        assert {user.id: store.reconcile.load_index(user.id) for user in users} == before
    db.close()
