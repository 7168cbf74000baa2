"""``blog-api preview`` and ``make preview`` as an author types them (the pages: tests/preview/, the
browser: tests/browser/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.kit.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_a_folder_that_does_not_exist_is_one_line_and_exit_1(tmp_path: Path) -> None:
    result = run_cli("preview", str(tmp_path / "nowhere"))

    assert result.exit_code == 1
    assert (
        result.stderr.strip()
        == f"error: {tmp_path / 'nowhere'}: no such folder (give your repository's root folder)"
    )


def test_help_names_the_path_and_the_port() -> None:
    result = run_cli("preview", "--help")

    assert result.exit_code == 0
    assert "[PATH]" in result.stdout and "--port" in result.stdout and "127.0.0.1" in result.stdout


def _planned(*args: str) -> list[str]:
    result = subprocess.run(
        ["make", "-n", "-B", "preview", "VENV=/nonexistent/venv", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_preview_previews_the_repository_named_by_repo() -> None:
    [command] = [line for line in _planned("REPO=../my-zenn") if "blog-api preview" in line]

    assert command.endswith('blog-api preview "../my-zenn" ')


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_preview_without_repo_says_how_to_name_it() -> None:
    result = subprocess.run(
        ["make", "preview", "VENV=/nonexistent/venv", "-o", "/nonexistent/venv/.installed-preview-stamp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode != 0
    assert "make preview REPO=path/to/your/zenn-repo" in result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_preview_passes_a_port_given_and_installs_the_watcher_not_the_dev_tools() -> None:
    plan = _planned("REPO=.", "PORT=8001")
    [command] = [line for line in plan if "blog-api preview" in line]
    [export] = [line for line in plan if "uv export" in line]

    assert command.endswith("--port 8001")
    assert "--extra preview" in export and "--extra dev" not in export
