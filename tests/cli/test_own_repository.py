"""Syncing one's own Zenn-shaped repository from a folder: whichever of its folders ``dir:`` names, its books
and images are read; in a git work tree, each article is dated by the commit that added its file."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.records import ArticleView
from tests.kit.cli import run_cli
from tests.kit.git_repos import GitRepo
from tests.kit.images import png

UNDATED = "---\ntitle: {title}\npublished: true\ntopics: [zenn]\n---\n![figure](/images/{image})\n"
CONFIG = "title: Guide\nsummary: ''\ntopics: []\npublished: true\nchapters:\n  - intro\n"
CHAPTER = "---\ntitle: Intro\n---\nhello\n"


def served(url: str, user: str = "demo") -> list[ArticleView]:
    db = open_database(url)
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles(user)
    db.close()
    assert articles is not None
    return articles


def served_book(url: str, slug: str, user: str = "demo") -> list[str] | None:
    """The chapter slugs of a served book, in order; None when it is not served."""
    db = open_database(url)
    with connection(db):
        book = PeeweeStore(db).book_reads.published_book(user, slug)
    db.close()
    return None if book is None else [chapter.slug for chapter in book.chapters]


def env_for(tmp_path: Path, folder: Path) -> dict[str, str | None]:
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{folder}",
        "GITHUB_WEBHOOK_SECRET": None,
        "ARTICLE_ASSET_BASE_URL": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return env


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A Zenn repository whose articles have no dates, added over three years, with a book and images."""
    repo = GitRepo(tmp_path / "my-zenn")
    repo.commit(
        "2021-04-01T21:00:00+09:00",
        {
            "articles/8f3a1c2e9b7d60.md": UNDATED.format(title="First", image="a.png"),
            "images/a.png": png(),
        },
    )
    repo.commit(
        "2022-07-10T08:00:00+09:00",
        {
            "articles/0b1c2d3e4f5a67.md": UNDATED.format(title="Second", image="b.png"),
            "images/b.png": png((0, 0, 255)),
            "books/guide-to-zenn/config.yaml": CONFIG,
            "books/guide-to-zenn/intro.md": CHAPTER,
        },
    )
    repo.commit(
        "2023-12-24T12:00:00+09:00",
        {"articles/zz9y8x7w6v5u43.md": UNDATED.format(title="Third", image="a.png")},
    )
    return repo


def test_articles_of_a_git_work_tree_are_dated_and_ordered_by_their_history(
    tmp_path: Path, repo: GitRepo
) -> None:
    env = env_for(tmp_path, repo.root)

    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 0, result.stdout + result.stderr
    articles = served(str(env["DATABASE_URL"]))
    # Newest first, by the commits that added them (not alphabetically, not all "today").
    assert [(a.title, a.published_at) for a in articles] == [
        ("Third", datetime(2023, 12, 24, 3, 0)),
        ("Second", datetime(2022, 7, 9, 23, 0)),
        ("First", datetime(2021, 4, 1, 12, 0)),
    ]


def test_naming_the_articles_folder_reads_the_whole_repository_and_says_so(
    tmp_path: Path, repo: GitRepo
) -> None:
    env = env_for(tmp_path, repo.root / "articles")

    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == (
        f"{repo.root / 'articles'} is the articles folder of the repository at {repo.root}: "
        "reading the repository (articles, books and images)"
    )
    # The images are found (no "no such file" warning) and the book is synced.
    assert "no such file" not in result.stdout and "warning" not in result.stdout.replace("warnings=0", "")
    assert served_book(str(env["DATABASE_URL"]), "guide-to-zenn") == ["intro"]
    assert [a.published_at for a in served(str(env["DATABASE_URL"]))][-1] == datetime(2021, 4, 1, 12, 0)
