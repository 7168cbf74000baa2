"""The mistakes a newcomer makes in the first hour, each answered by one line that names the fix.

Every command here is ``blog-api`` as the console script runs it (``run_cli``); "one line" means stderr
holds exactly one line, starting ``error:``, and the exit code is not zero.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pymysql
import pytest

from function.store.migrations.steps import SCHEMA_VERSION
from tests.kit.cli import CliResult, run_cli
from tests.kit.mariadb import server_from_url

# Every setting a machine could leak into the test: the "bare environment" of a fresh clone.
BARE: dict[str, str | None] = {
    "DATABASE_URL": None,
    "DATABASE_URL_PARAM": None,
    "ARTICLE_SOURCE": None,
    "GITHUB_APP_ID": None,
    "GITHUB_APP_PRIVATE_KEY": None,
    "GITHUB_APP_PRIVATE_KEY_PARAM": None,
    "GITHUB_WEBHOOK_SECRET": None,
    "GITHUB_WEBHOOK_SECRET_PARAM": None,
}


def one_line(result: CliResult) -> str:
    """The single error line (without ``error: ``), after checking there is exactly one and a failure."""
    assert result.exit_code != 0, result.stdout
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and "None" not in result.stderr
    return result.stderr.removeprefix("error: ").rstrip("\n")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str | None]:
    values = {**BARE, "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db"}
    assert run_cli("init-db", env=values).exit_code == 0
    return values


def add(env: dict[str, str | None], name: str, *extra: str) -> CliResult:
    return run_cli("users", "add", "--name", name, "--email", f"{name}@example.com", *extra, env=env)


# -- users add ------------------------------------------------------------------------------------


def test_adding_an_existing_user_without_an_installation_names_the_way_out(
    env: dict[str, str | None],
) -> None:
    assert add(env, "alice").exit_code == 0

    line = one_line(add(env, "alice"))

    assert line.startswith("user 'alice' already exists (no installation yet)")
    assert "--if-missing" in line and "users set-installation" in line


def test_adding_an_existing_user_names_its_installation(env: dict[str, str | None]) -> None:
    assert add(env, "alice", "--installation-id", "7").exit_code == 0

    line = one_line(add(env, "alice", "--installation-id", "8"))

    assert line.startswith("user 'alice' already exists (installation 7)")


def test_a_new_user_with_a_taken_installation_is_told_whose_it_is(env: dict[str, str | None]) -> None:
    assert add(env, "alice", "--installation-id", "7").exit_code == 0

    line = one_line(add(env, "bob", "--installation-id", "7"))

    # Not "a user named 'bob' ... exists": bob does not exist, installation 7 is alice's.
    assert line.startswith("installation 7 is already registered to user 'alice'")
    assert "bob" not in line
    assert run_cli("users", "list", env=env).stdout.count("\n") == 1


def test_set_installation_names_the_user_holding_it(env: dict[str, str | None]) -> None:
    assert add(env, "alice", "--installation-id", "7").exit_code == 0
    assert add(env, "bob").exit_code == 0

    taken = one_line(run_cli("users", "set-installation", "--name", "bob", "--installation-id", "7", env=env))
    unknown = one_line(
        run_cli("users", "set-installation", "--name", "carol", "--installation-id", "9", env=env)
    )

    assert taken.startswith("installation 7 is already registered to user 'alice'")
    assert unknown.startswith("no user named 'carol'") and "users list" in unknown


# -- sync -----------------------------------------------------------------------------------------


def test_sync_of_an_unknown_user_in_a_bare_environment_names_the_user_not_the_app(
    env: dict[str, str | None],
) -> None:
    # ARTICLE_SOURCE defaults to github and no App is configured: the user is still the first check.
    line = one_line(run_cli("sync", "--user", "nobody", env=env))

    assert line.startswith("no user named 'nobody'")
    assert "blog-api users add --name nobody" in line


def test_sync_of_a_known_user_without_the_app_settings_names_them(env: dict[str, str | None]) -> None:
    assert add(env, "alice", "--installation-id", "7", "--repository", "alice/blog").exit_code == 0

    line = one_line(run_cli("sync", "--user", "alice", env=env))

    assert line.startswith(
        "GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY (or GITHUB_APP_PRIVATE_KEY_PARAM) not set"
    )
    assert "ARTICLE_SOURCE=dir:PATH" in line


# -- a database that is not there -----------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("deliveries",),
        ("users", "list"),
        ("sync", "--user", "demo"),
        ("users", "add", "--name", "x", "--email", "x@y.z"),
    ],
)
def test_commands_run_from_another_folder_create_no_database_and_name_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    monkeypatch.chdir(tmp_path)

    line = one_line(run_cli(*argv, env=BARE))

    assert line.startswith(f"no database at {tmp_path / '.data' / 'blog.db'}")
    assert "relative to the current folder" in line and "DATABASE_URL" in line
    assert not (tmp_path / ".data").exists()


def test_a_named_sqlite_file_that_does_not_exist_is_not_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/typo.db"

    line = one_line(run_cli("deliveries", env={**BARE, "DATABASE_URL": url}))

    assert (
        line
        == f"no database at {tmp_path / 'typo.db'}: check DATABASE_URL, or create it with `blog-api init-db`"
    )
    assert not (tmp_path / "typo.db").exists()


def test_init_db_creates_the_default_database_where_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert run_cli("init-db", env=BARE).stdout == (
        f"created the tables at schema version {SCHEMA_VERSION}\ndatabase ready\n"
    )
    assert (tmp_path / ".data" / "blog.db").is_file()
    assert run_cli("deliveries", env=BARE).exit_code == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_init_db_against_an_unreachable_mysql_says_so_in_words() -> None:
    port = _closed_port()

    line = one_line(run_cli("init-db", env={**BARE, "DATABASE_URL": f"mysql://u:pw@127.0.0.1:{port}/blog"}))

    assert line.startswith(f"cannot reach the database at 127.0.0.1:{port} (connection refused)")
    assert "(2003" not in line and "pw" not in line


@pytest.mark.mysql
def test_init_db_with_a_wrong_password_names_the_user(mysql_url: str) -> None:
    info = server_from_url(mysql_url)
    admin = info.connect()
    try:
        with admin.cursor() as cursor:
            cursor.execute("CREATE USER IF NOT EXISTS 'newcomer'@'%' IDENTIFIED BY 'right-password'")
            cursor.execute("CREATE USER IF NOT EXISTS 'newcomer'@'localhost' IDENTIFIED BY 'right-password'")
        url = f"mysql://newcomer:wrong-password@{info.host}:{info.port}/blog"

        line = one_line(run_cli("init-db", env={**BARE, "DATABASE_URL": url}))
    finally:
        with admin.cursor() as cursor:
            cursor.execute("DROP USER IF EXISTS 'newcomer'@'%'")
            cursor.execute("DROP USER IF EXISTS 'newcomer'@'localhost'")
        admin.close()

    assert line.startswith(f"authentication failed for user 'newcomer' at {info.host}:{info.port}")
    assert "password" in line and "wrong-password" not in line and "(1045" not in line


@pytest.mark.mysql
def test_init_db_against_a_database_that_does_not_exist_names_it(mysql_url: str) -> None:
    info = server_from_url(mysql_url)
    url = info.url_for("no_such_blog_db")

    line = one_line(run_cli("init-db", env={**BARE, "DATABASE_URL": url}))

    assert line.startswith(f"the database 'no_such_blog_db' does not exist at {info.host}:{info.port}")
    assert "CREATE DATABASE no_such_blog_db" in line


def test_driver_tuples_never_reach_the_line() -> None:
    # A message built from a driver error elsewhere still reads as words.
    from function.cli.failures import describe
    from function.store.url import parse_database_url

    err = pymysql.err.OperationalError(2003, "Can't connect to MySQL server on 'db.example' (timed out)")
    target = parse_database_url("mysql://u:p@db.example:4000/blog")

    assert describe(err, target).startswith("cannot reach the database at db.example:4000 (timed out)")
