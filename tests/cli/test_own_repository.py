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


def test_the_summary_counts_articles_and_books_apart_with_what_was_written(
    tmp_path: Path, repo: GitRepo
) -> None:
    env = env_for(tmp_path, repo.root)

    first = run_cli("sync", "--user", "demo", env=env)
    again = run_cli("sync", "--user", "demo", env=env)

    assert first.exit_code == 0, first.stdout
    lines = first.stdout.splitlines()
    assert lines[1].startswith("synced demo: processed=4 succeeded=4 failed=0 fetched=")
    assert " written=4 unchanged=0 archived=0 " in lines[1]
    assert lines[2] == "  3 articles: 3 published, 0 drafts (not served)"
    assert lines[3] == "  1 books: 1 published, 0 drafts"
    assert " written=0 unchanged=4 " in again.stdout.splitlines()[1]


def test_a_cli_sync_is_recorded_among_the_deliveries_with_its_warnings(tmp_path: Path, repo: GitRepo) -> None:
    repo.commit("2024-01-01T00:00:00Z", {"articles/typo0123456789.md": "---\ntitle: T\ncanonical: x\n---\n"})
    env = env_for(tmp_path, repo.root)

    run_cli("sync", "--user", "demo", env=env)
    listed = run_cli("deliveries", env=env).stdout.splitlines()

    [row] = listed[1:]
    fields = row.split("\t")
    assert fields[0].startswith("sync-") and fields[1] == "sync"
    assert fields[5] == "5/5/0" and fields[7] == "success"
    assert "warning: articles/typo0123456789.md: unknown front matter key 'canonical'" in fields[8]


def test_a_book_without_some_of_its_chapters_is_a_partial_sync_exit_3(tmp_path: Path, repo: GitRepo) -> None:
    repo.commit(
        "2024-02-02T00:00:00Z",
        {
            "books/guide-to-zenn/config.yaml": CONFIG.replace(
                "  - intro\n", "  - intro\n  - later\n  - never\n"
            )
        },
    )
    env = env_for(tmp_path, repo.root)

    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 3, result.stdout
    assert "  1 books: 1 published, 0 drafts; served without some chapters: guide-to-zenn" in result.stdout
    assert "  warning books/guide-to-zenn/later.md: config.yaml's 'chapters' lists 'later'" in result.stdout
    assert "  warning books/guide-to-zenn/never.md: config.yaml's 'chapters' lists 'never'" in result.stdout
    assert served_book(str(env["DATABASE_URL"]), "guide-to-zenn") == ["intro"]
