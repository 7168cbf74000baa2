"""``blog-api sync`` of a Zenn repository through the folder source (SQLite and MariaDB)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit.cli import run_cli

ZENN = Path(__file__).resolve().parents[1] / "fixtures" / "zenn"


@pytest.fixture
def zenn_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ZENN / "articles", root / "articles")
    return root


@pytest.fixture
def env(db_url: str, zenn_repo: Path) -> dict[str, str | None]:
    env: dict[str, str | None] = {
        "DATABASE_URL": db_url,
        "ARTICLE_SOURCE": f"dir:{zenn_repo}",
        "GITHUB_WEBHOOK_SECRET": None,
        "ARTICLE_TIMEZONE": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return env


def published(url: str) -> dict[str, object]:
    db = open_database(url)
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles("demo")
        assert articles is not None
        found: dict[str, object] = {a.slug: a.published_at for a in articles}
    db.close()
    return found


def test_sync_of_a_zenn_folder_serves_it_reports_drafts_and_exits_0(
    env: dict[str, str | None], db_url: str
) -> None:
    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "processed=10 succeeded=10 failed=0" in result.stdout  # README.md is not counted
    assert "9 published, 1 drafts" in result.stdout
    assert "README" not in result.stdout
    assert len(published(db_url)) == 9
    # Nothing changed: nothing is read, and the drafts are counted from what is stored.
    again = run_cli("sync", "--user", "demo", env=env)
    assert "fetched=0" in again.stdout and "9 published, 1 drafts" in again.stdout


def test_a_folder_of_only_non_articles_and_drafts_exits_0(
    env: dict[str, str | None], zenn_repo: Path
) -> None:
    for path in (zenn_repo / "articles").iterdir():
        if path.name not in ("README.md", "a1b2c3d4e5f6a7.md"):
            path.unlink()
    (zenn_repo / "articles" / "_template.md").write_text("not front matter at all\n")
    (zenn_repo / "articles" / ".scratch.md").write_text("---\n")

    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 0, result.stdout
    assert "processed=1 succeeded=1 failed=0" in result.stdout and "0 published, 1 drafts" in result.stdout


def test_a_broken_file_fails_the_sync_every_time_without_being_read_again(
    env: dict[str, str | None], zenn_repo: Path
) -> None:
    (zenn_repo / "articles" / "broken.md").write_text("---\ntitle: [unclosed\n---\n")
    first = run_cli("sync", "--user", "demo", env=env)
    assert first.exit_code == 2
    assert "failed articles/broken.md: front matter is not valid YAML" in first.stdout

    second = run_cli("sync", "--user", "demo", env=env)

    assert second.exit_code == 2
    assert "fetched=0" in second.stdout
    assert "failed articles/broken.md: front matter is not valid YAML" in second.stdout
    assert "not fetched again" in second.stdout


def test_unknown_keys_are_printed_as_warnings(env: dict[str, str | None], zenn_repo: Path) -> None:
    (zenn_repo / "articles" / "extra.md").write_text("---\ntitle: X\npublished: true\nslide: false\n---\n")
    result = run_cli("sync", "--user", "demo", env=env)
    assert result.exit_code == 0
    assert "warning articles/extra.md: unknown front matter key 'slide' (ignored)" in result.stdout


def test_article_timezone_changes_how_zone_less_dates_are_read(
    env: dict[str, str | None], db_url: str
) -> None:
    assert run_cli("sync", "--user", "demo", env={**env, "ARTICLE_TIMEZONE": "UTC"}).exit_code == 0
    assert str(published(db_url)["zenn-published-at"]) == "2024-01-21 09:30:00"


def test_a_bad_article_timezone_is_a_configuration_error(env: dict[str, str | None]) -> None:
    result = run_cli("sync", "--user", "demo", env={**env, "ARTICLE_TIMEZONE": "Mars/Olympus"})
    assert result.exit_code != 0 and "ARTICLE_TIMEZONE" in result.stderr
