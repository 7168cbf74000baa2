"""``make run``: installs only what serving needs, serves where PORT and HOST say, serves the folder REPO
names (or any ARTICLE_SOURCE given on the command line) from its own database, and sets no SITE_URL."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(*args: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The commands ``make run`` would run from a fresh clone (``-n``: printed, not run; ``-B``: as if
    nothing were installed yet), in a venv path that does not exist; ``env`` added to the environment."""
    result = subprocess.run(
        ["make", "-n", "-B", "run", "VENV=/nonexistent/venv", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return result.stdout.splitlines()


def settings_of(line: str) -> dict[str, str]:
    """The VAR=value words a planned command line starts with."""
    found = {}
    for word in line.split():
        name, equals, value = word.partition("=")
        if not equals or not name.isupper():
            break
        found[name] = value
    return found


def step(plan: list[str], marker: str) -> str:
    [line] = [line for line in plan if marker in line]
    return line


def test_run_serves_on_the_port_and_host_given() -> None:
    [serve] = [line for line in planned("PORT=5001", "HOST=0.0.0.0") if "flask" in line]

    assert serve.endswith("--app function.app run --host 0.0.0.0 --port 5001")


def test_run_defaults_to_the_local_port_5000() -> None:
    [serve] = [line for line in planned() if "flask" in line]

    assert serve.endswith("--host 127.0.0.1 --port 5000")


def test_run_installs_the_runtime_only_not_the_dev_extra() -> None:
    plan = planned()
    installs = [line for line in plan if "pip install" in line]
    [export] = [line for line in plan if "uv export" in line]

    # The locked versions of the runtime dependencies, no dev extra, then the project itself.
    assert "--locked" in export and "--extra" not in export
    assert installs and all("[dev]" not in line for line in installs)
    assert any("--require-hashes" in line for line in installs)
    assert any(line.endswith("pip install -q --no-deps -e .") for line in installs)


def test_run_serves_the_folder_repo_names_from_a_database_of_its_own() -> None:
    plan = planned("REPO=../my-zenn")
    serve = settings_of(step(plan, "flask"))

    assert serve["ARTICLE_SOURCE"] == "dir:../my-zenn"
    assert serve["DATABASE_URL"] == "sqlite:///.data/my-zenn.db"
    # The folder is synced as the demo user before the server starts, with the same settings.
    sync = step(plan, "blog-api sync")
    assert "sync --user demo" in sync and settings_of(sync) == serve
    assert plan.index(sync) < plan.index(step(plan, "flask"))


def test_run_names_the_database_after_the_repository_when_given_its_articles_folder() -> None:
    serve = settings_of(step(planned("REPO=/home/me/my-zenn/articles/"), "flask"))

    assert serve["ARTICLE_SOURCE"] == "dir:/home/me/my-zenn/articles/"
    assert serve["DATABASE_URL"] == "sqlite:///.data/my-zenn.db"


def test_run_without_repo_serves_the_sample_from_the_usual_database() -> None:
    serve = settings_of(step(planned(), "flask"))

    assert serve["ARTICLE_SOURCE"] == "dir:examples/articles"
    assert serve["DATABASE_URL"] == "sqlite:///.data/blog.db"
    assert serve["GITHUB_WEBHOOK_SECRET"] == "dev-secret"


def test_settings_given_on_the_command_line_reach_every_step() -> None:
    plan = planned("ARTICLE_SOURCE=dir:/srv/blog", "DATABASE_URL=sqlite:///other.db", "LOG_LEVEL=DEBUG")

    for marker in ("init-db", "users add", "blog-api sync", "flask"):
        line = step(plan, marker)
        assert settings_of(line)["ARTICLE_SOURCE"] == "dir:/srv/blog", line
        assert settings_of(line)["DATABASE_URL"] == "sqlite:///other.db", line
    # make hands command-line variables to the commands' environment: LOG_LEVEL needs no special case.
    result = subprocess.run(
        ["make", "-s", "--no-print-directory", "-f", "-", "show", "LOG_LEVEL=DEBUG"],
        input="show:\n\t@echo $$LOG_LEVEL\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.strip() == "DEBUG"


def test_a_database_or_source_exported_in_the_shell_is_never_used_by_run() -> None:
    # A DATABASE_URL exported for other work (say production) must not be written to by a local server.
    serve = settings_of(
        step(planned(env={"DATABASE_URL": "mysql://prod/blog", "ARTICLE_SOURCE": "github"}), "flask")
    )

    assert serve["DATABASE_URL"] == "sqlite:///.data/blog.db"
    assert serve["ARTICLE_SOURCE"] == "dir:examples/articles"


def test_run_sets_no_site_url_so_feed_links_are_never_the_api() -> None:
    # SITE_URL is where the blog's pages are (the front end), never this API: unset, the feed and the
    # sitemap say so rather than link to pages that do not exist.
    assert "SITE_URL" not in settings_of(step(planned(), "flask"))
    given = settings_of(step(planned("SITE_URL=http://localhost:3000"), "flask"))
    assert "SITE_URL" not in given  # passed by make itself, like every other command-line variable


def test_the_editable_install_is_a_plain_path_entry_without_a_warning_box() -> None:
    # setuptools installs a flat layout editable with a meta path finder, and prints a warning box,
    # unless the packages are declared at the root ("package-dir"): then it writes a path entry.
    pth = sorted(Path(sysconfig.get_paths()["purelib"]).glob("__editable__.blog_api-*.pth"))
    if not pth:
        pytest.skip("blog-api is not installed in editable mode here")
    assert [line for line in pth[0].read_text().splitlines() if line] == [str(ROOT)]
