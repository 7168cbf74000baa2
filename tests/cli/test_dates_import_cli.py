"""``blog-api dates import --user U --from PATH``: a blog synced without history (as from GitHub) dated once
from a clone's git log, idempotently."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit.cli import run_cli
from tests.kit.git_repos import GitRepo

UNDATED = "---\ntitle: {title}\npublished: true\n---\nbody\n"


def served_dates(url: str) -> dict[str, datetime | None]:
    db = open_database(url)
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles("demo")
    db.close()
    assert articles is not None
    return {a.title: a.published_at for a in articles}


@pytest.fixture
def clone(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "clone")
    repo.commit("2020-02-03T10:00:00+09:00", {"articles/aaaaaaaaaaaa01.md": UNDATED.format(title="One")})
    repo.commit("2021-05-06T10:00:00+09:00", {"articles/bbbbbbbbbbbb02.md": UNDATED.format(title="Two")})
    repo.commit(
        "2022-08-09T10:00:00+09:00",
        rename={"articles/aaaaaaaaaaaa01.md": "articles/cccccccccccc03.md"},
    )
    return repo


@pytest.fixture
def env(tmp_path: Path, clone: GitRepo) -> dict[str, str | None]:
    """A blog synced from a copy of the clone's files without its history: dated by the sync, as a GitHub
    repository is."""
    copy = tmp_path / "no-history"
    shutil.copytree(clone.root, copy, ignore=shutil.ignore_patterns(".git"))
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{copy}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return env


def test_import_dates_the_first_sync_by_the_commits_that_added_each_file(
    env: dict[str, str | None], clone: GitRepo
) -> None:
    assert run_cli("sync", "--user", "demo", env=env).exit_code == 0
    synced = served_dates(str(env["DATABASE_URL"]))
    assert synced["One"] == synced["Two"]  # the first sync's stand-in: one moment for all

    result = run_cli("dates", "import", "--user", "demo", "--from", str(clone.root), env=env)

    assert result.exit_code == 0, result.stderr
    # The renamed file keeps the date its first name was added.
    assert served_dates(str(env["DATABASE_URL"])) == {
        "One": datetime(2020, 2, 3, 1, 0),
        "Two": datetime(2021, 5, 6, 1, 0),
    }
    assert result.stdout.splitlines()[-1] == (
        "dates import demo: 2 dated from the history, 0 kept (a date already served), "
        "0 drafts (dated when first published), 0 not in the history, 0 not synced yet"
    )
    assert "  dated cccccccccccc03: " in result.stdout and "-> 2020-02-03 01:00 UTC" in result.stdout


def test_a_second_import_moves_nothing(env: dict[str, str | None], clone: GitRepo) -> None:
    assert run_cli("sync", "--user", "demo", env=env).exit_code == 0
    assert run_cli("dates", "import", "--user", "demo", "--from", str(clone.root), env=env).exit_code == 0
    dated = served_dates(str(env["DATABASE_URL"]))

    again = run_cli("dates", "import", "--user", "demo", "--from", str(clone.root / "articles"), env=env)

    assert again.exit_code == 0
    assert "0 dated from the history, 2 kept (a date already served)" in again.stdout
    assert served_dates(str(env["DATABASE_URL"])) == dated


def test_importing_before_the_first_sync_says_to_sync_first(
    env: dict[str, str | None], clone: GitRepo
) -> None:
    result = run_cli("dates", "import", "--user", "demo", "--from", str(clone.root), env=env)

    assert result.exit_code == 0
    assert "2 not synced yet" in result.stdout
    assert "sync first (`blog-api sync --user demo`, or the first push), then run this again" in result.stderr


def test_a_folder_without_history_is_refused_in_one_line(env: dict[str, str | None], tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "articles").mkdir(parents=True)
    (plain / "articles" / "x.md").write_text(UNDATED.format(title="X"))

    result = run_cli("dates", "import", "--user", "demo", "--from", str(plain), env=env)

    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"error: no git history for the articles of {plain}: --from takes a clone"
    )
    assert result.stderr.count("\n") == 1


def test_an_unknown_user_is_refused_in_one_line(env: dict[str, str | None], clone: GitRepo) -> None:
    result = run_cli("dates", "import", "--user", "nobody", "--from", str(clone.root), env=env)

    assert result.exit_code == 1
    assert result.stderr == "error: no user named 'nobody' (`blog-api users list` shows who exists)\n"
