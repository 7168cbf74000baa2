"""``blog-api sync --user N``: a full scan now, from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit.blog_fixtures import article
from tests.kit.cli import run_cli
from tests.kit.github_fixtures import INSTALLATION_ID, REPO, AppKey
from tests.kit.github_standin import GitHubStandIn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "articles"


def published_slugs(url: str, user: str) -> set[str]:
    db = open_database(url)
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles(user)
        assert articles is not None, f"no user {user!r}"
        slugs = {a.slug for a in articles}
    db.close()
    return slugs


@pytest.fixture
def dir_env(tmp_path: Path) -> dict[str, str | None]:
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{EXAMPLES}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return env


def test_sync_reads_the_example_folder_and_reports_the_counts(dir_env: dict[str, str | None]) -> None:
    result = run_cli("sync", "--user", "demo", env=dir_env)

    assert result.exit_code == 0, result.stderr
    assert "synced demo: processed=8 succeeded=8 failed=0" in result.stdout
    assert len(published_slugs(str(dir_env["DATABASE_URL"]), "demo")) >= 6  # drafts are not served


def test_sync_of_an_unknown_user_is_a_one_line_error(dir_env: dict[str, str | None]) -> None:
    result = run_cli("sync", "--user", "nobody", env=dir_env)

    assert result.exit_code == 1
    assert result.stderr.startswith("error: no user named 'nobody': add it with `blog-api users add")
    assert result.stderr.count("\n") == 1


def test_from_github_a_user_without_a_known_repository_is_told_to_name_it(
    tmp_path: Path, github: GitHubStandIn, github_app_key: AppKey
) -> None:
    # GIVEN a user added the contract's way (no repository: it is learned from the first push)
    github.set_files({"articles/hello.md": article("Hello")}, repo=REPO)
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": "github",
        "GITHUB_APP_ID": str(github.app_id),
        "GITHUB_APP_PRIVATE_KEY": github_app_key.private_pem,
        "GITHUB_API_URL": github.url,
        "GITHUB_WEBHOOK_SECRET": None,
        "HTTPS_PROXY": None,
    }
    run_cli("init-db", env=env)
    run_cli(
        "users",
        "add",
        "--name",
        "alice",
        "--email",
        "a@x.example",
        "--installation-id",
        str(INSTALLATION_ID),
        env=env,
    )

    # WHEN it is synced without a repository THEN one line says what to pass, and nothing is read
    refused = run_cli("sync", "--user", "alice", env=env)
    assert refused.exit_code == 1
    assert refused.stderr.count("\n") == 1 and "--repository owner/name" in refused.stderr
    assert github.count() == 0

    # WHEN it names the repository THEN the articles are synced from GitHub
    done = run_cli("sync", "--user", "alice", "--repository", REPO, env=env)
    assert done.exit_code == 0, done.stderr
    assert "processed=1 succeeded=1" in done.stdout
    assert published_slugs(str(env["DATABASE_URL"]), "alice") == {"hello"}

    # AND the named repository is now the one followed: another one is refused, the pinned one is used
    other = run_cli("sync", "--user", "alice", "--repository", "octo/dotfiles", env=env)
    assert other.exit_code == 1 and "follows octo/blog" in other.stderr and "set-repository" in other.stderr
    again = run_cli("sync", "--user", "alice", env=env)
    assert again.exit_code == 0, again.stderr
