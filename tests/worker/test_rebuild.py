"""``sync --rebuild``: after an upgrade that renders differently, every article is read and rendered
again, unchanged files too; without it an unchanged file is never fetched."""

from __future__ import annotations

from function.store.models import ArticleBody
from function.worker.sync import Worker
from tests.kit.blog_fixtures import USER, Blog, article


def _stale_html(blog: Blog) -> None:
    """What an older renderer left in the database."""
    with blog.store() as store:
        ArticleBody.update(content_html="<p>rendered by an older version</p>").bind(store.db).execute()


def test_rebuild_renders_every_article_again_and_keeps_their_times(blog: Blog) -> None:
    # GIVEN two synced articles whose stored HTML came from an older renderer
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    assert blog.push(delivery="first").status_code == 200
    before = {a["slug"]: a for a in (blog.article("a"), blog.article("b"))}
    _stale_html(blog)

    # WHEN a plain sync runs, THEN nothing is fetched and the old HTML stays
    with blog.store() as store:
        plain = Worker(store, blog.source).sync_user(USER)
    assert plain.fetched == 0
    assert "older version" in blog.article("a")["contentHtml"]

    # WHEN a rebuild runs
    with blog.store() as store:
        rebuilt = Worker(store, blog.source).sync_user(USER, rebuild=True)

    # THEN both files were read again and their HTML is today's, their times untouched
    assert rebuilt.fetched == 2 and rebuilt.failed == 0
    for slug in ("a", "b"):
        now = blog.article(slug)
        assert "older version" not in now["contentHtml"]
        assert now["contentHtml"] == before[slug]["contentHtml"]
        assert (now["updatedAt"], now["publishedAt"]) == (
            before[slug]["updatedAt"],
            before[slug]["publishedAt"],
        )
