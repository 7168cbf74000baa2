"""A GitHub repository's articles dated from a local clone's history (``dates import``), through the App
path: the feed takes the history's order, and later pushes never move a date again."""

from __future__ import annotations

from pathlib import Path

from function.worker.history_dates import import_dates, read_history
from tests.kit.blog_fixtures import Blog, article
from tests.kit.git_repos import GitRepo

FILES = {
    "articles/aaaaaaaaaaaa01.md": article("Oldest"),
    "articles/bbbbbbbbbbbb02.md": article("Middle"),
    "articles/cccccccccccc03.md": article("Newest"),
}


def clone_of(tmp_path: Path) -> GitRepo:
    """The same repository cloned locally, its files added over three years."""
    repo = GitRepo(tmp_path / "clone")
    for year, (path, content) in zip((2020, 2021, 2022), FILES.items(), strict=True):
        repo.commit(f"{year}-03-01T09:00:00+09:00", {path: content})
    return repo


def test_an_imported_history_orders_the_feed_and_survives_later_pushes(blog: Blog, tmp_path: Path) -> None:
    # GIVEN a repository synced from GitHub: every article dated by the first sync, same moment
    blog.github.set_files(FILES)
    assert blog.push(delivery="first").status_code == 200
    assert len({a["publishedAt"] for a in blog.articles()}) == 1

    # WHEN its dates are imported from a clone
    history = read_history(clone_of(tmp_path).root, "articles")
    with blog.store() as store:
        result = import_dates(store.users, store.locks, store.dates, "alice", history)

    # THEN the feed is in the history's order, with its dates
    assert len(result.dated) == 3
    served = [(a["title"], a["publishedAt"]) for a in blog.articles()]
    assert served == [
        ("Newest", "2022-03-01T00:00:00.000000Z"),
        ("Middle", "2021-03-01T00:00:00.000000Z"),
        ("Oldest", "2020-03-01T00:00:00.000000Z"),
    ]
    # AND an edit pushed later keeps every date
    blog.commit({"articles/aaaaaaaaaaaa01.md": article("Oldest", body="edited")})
    assert blog.push(delivery="edit").status_code == 200
    assert [(a["title"], a["publishedAt"]) for a in blog.articles()] == served
