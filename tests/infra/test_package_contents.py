"""What of the checkout goes into the Lambda zip: only the Python files git tracks under ``function/`` and
``shared/`` (and the data files the packaging declares), never a dotfile, an untracked file, a test or a
cache. A secret left in the work tree (``function/.env``) must never ship."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from infra import packaging

REPO_ROOT = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A small git checkout: two tracked modules, then files a developer might leave lying around."""
    root = tmp_path / "checkout"
    for name in ("function/__init__.py", "function/app.py", "shared/__init__.py", "shared/names.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n")
    git(root, "init", "-q")
    git(root, "add", "function", "shared")
    return root


def names(root: Path) -> set[str]:
    return {name for name, _ in packaging.source_entries(root)}


def test_the_package_sources_are_the_tracked_python_files(checkout: Path) -> None:
    assert names(checkout) == {
        "function/__init__.py",
        "function/app.py",
        "shared/__init__.py",
        "shared/names.py",
    }


@pytest.mark.parametrize(
    ("planted", "tracked"),
    [
        ("function/.env", False),  # the planted secret: untracked (and ignored by the repository)
        ("function/.env", True),  # ... even when someone forced it into git
        ("shared/.secrets.py", True),  # a dotfile that looks like a module
        ("function/.hidden/leak.py", True),  # anything under a dot folder
        ("function/scratch.py", False),  # a module nobody committed
        ("function/notes.txt", True),  # a tracked file that is neither Python nor declared data
        ("function/tests/test_x.py", True),
        ("function/__pycache__/app.cpython-312.pyc", False),
    ],
)
def test_a_planted_file_never_reaches_the_package(checkout: Path, planted: str, tracked: bool) -> None:
    path = checkout / planted
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("AWS_SECRET_ACCESS_KEY=planted\n")
    if tracked:
        git(checkout, "add", "-f", planted)
    assert planted not in names(checkout)
    assert names(checkout) >= {"function/app.py", "shared/names.py"}


def test_a_tracked_file_deleted_from_the_work_tree_is_left_out(checkout: Path) -> None:
    (checkout / "shared" / "names.py").unlink()
    assert "shared/names.py" not in names(checkout)


def test_a_folder_that_is_not_a_git_checkout_is_refused_with_words(tmp_path: Path) -> None:
    (tmp_path / "function").mkdir()
    (tmp_path / "function" / "app.py").write_text("")
    with pytest.raises(packaging.PackagingError, match="git"):
        packaging.source_entries(tmp_path)


def test_the_repository_ignores_env_files() -> None:
    for path in (".env", "function/.env", "shared/.env", ".env.local"):
        ignored = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "check-ignore", "-q", "--no-index", path], check=False
        )
        assert ignored.returncode == 0, f"{path} is not ignored by .gitignore"
