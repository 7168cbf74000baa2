"""``blog-api users add`` / ``users list``: registering who the blog serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.cli import run_cli


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str | None]:
    values: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=values).exit_code == 0
    return values


def test_a_user_is_added_once_and_listed(env: dict[str, str | None]) -> None:
    added = run_cli(
        "users", "add", "--name", "alice", "--email", "a@example.com", "--installation-id", "7", env=env
    )
    again = run_cli("users", "add", "--name", "alice", "--email", "b@example.com", env=env)
    listed = run_cli("users", "list", env=env)

    assert added.exit_code == 0 and added.stdout.startswith("added: alice\ta@example.com\tinstallation=7")
    assert again.exit_code == 1 and again.stderr.count("\n") == 1 and "alice" in again.stderr
    assert listed.stdout.splitlines() == ["alice\ta@example.com\tinstallation=7\trepository=-"]


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--name", "", "--name must be"),
        ("--name", "al/ice", "--name must be"),
        ("--name", "x" * 101, "--name must be"),
        ("--email", "", "--email must be"),
        ("--email", "not an address", "--email must be"),
        ("--installation-id", "0", "--installation-id must be"),
        ("--repository", "just-a-name", "--repository must look like owner/name"),
    ],
)
def test_values_nobody_could_use_are_refused_in_one_line(
    env: dict[str, str | None], option: str, value: str, says: str
) -> None:
    fields = {"--name": "alice", "--email": "a@example.com", option: value}
    argv = [item for pair in fields.items() for item in pair]

    result = run_cli("users", "add", *argv, env=env)

    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {says}") and result.stderr.count("\n") == 1
    assert run_cli("users", "list", env=env).stdout == ""


def test_set_repository_changes_the_followed_repository_and_forgets_its_id(
    env: dict[str, str | None],
) -> None:
    run_cli("users", "add", "--name", "alice", "--email", "a@example.com", "--repository", "a/blog", env=env)

    moved = run_cli("users", "set-repository", "--name", "alice", "--repository", "a/articles", env=env)
    bad = run_cli("users", "set-repository", "--name", "alice", "--repository", "nope", env=env)
    unknown = run_cli("users", "set-repository", "--name", "bob", "--repository", "b/blog", env=env)

    assert moved.exit_code == 0, moved.stderr
    assert "repository=a/articles (id pinned by its first push)" in moved.stdout
    assert bad.exit_code == 1 and "--repository must look like owner/name" in bad.stderr
    assert unknown.exit_code == 1 and "bob" in unknown.stderr
    assert run_cli("users", "list", env=env).stdout.splitlines() == [
        "alice\ta@example.com\tinstallation=-\trepository=a/articles (id pinned by its first push)"
    ]
