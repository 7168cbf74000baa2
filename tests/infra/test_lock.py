"""uv.lock: it matches pyproject.toml, and the bounds on the libraries whose internals the code uses, and
on those whose output the stored HTML is, hold."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from function.articles.render_fingerprint import RENDER_LIBRARIES
from infra import packaging

REPO_ROOT = Path(__file__).resolve().parents[2]
# Libraries whose private API the code touches: their next major must be a deliberate update.
BOUNDED = {"peewee": 5, "pymysql": 2}
# The renderer's libraries (those a stored render's fingerprint names): the stored HTML is their output
# byte for byte, so each is held below the next minor release after the locked one.
RENDERER = tuple(name.lower() for name in RENDER_LIBRARIES)


def uv_lock_check(root: Path) -> subprocess.CompletedProcess[str]:
    # --offline: the check compares pyproject.toml with the lock, it needs no index.
    return subprocess.run(
        [*packaging.uv_command(), "lock", "--check", "--offline", "--project", str(root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_lock_matches_pyproject() -> None:
    result = uv_lock_check(REPO_ROOT)
    assert result.returncode == 0, result.stderr


def test_the_check_fails_when_pyproject_changes(tmp_path: Path) -> None:
    (tmp_path / "uv.lock").write_text((REPO_ROOT / "uv.lock").read_text())
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('"flask>=3.0"', '"flask>=3.0", "six>=1.16"'))
    result = uv_lock_check(tmp_path)
    assert result.returncode != 0


@pytest.mark.parametrize(("name", "below"), sorted(BOUNDED.items()))
def test_majors_are_bounded_and_the_lock_respects_them(name: str, below: int) -> None:
    dependencies = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (spec,) = [d for d in dependencies if re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() == name]
    assert f"<{below}" in spec.replace(" ", ""), spec
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text())
    (package,) = [p for p in lock["package"] if p["name"] == name]
    assert int(package["version"].split(".")[0]) < below


def _spec(name: str) -> str:
    dependencies = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (spec,) = [d for d in dependencies if re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() == name]
    return str(spec).replace(" ", "")


@pytest.mark.parametrize("name", RENDERER)
def test_the_renderers_libraries_stay_below_their_next_minor_release(name: str) -> None:
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text())
    (package,) = [p for p in lock["package"] if p["name"] == name]
    major, minor = (int(part) for part in package["version"].split(".")[:2])
    spec = _spec(name)
    assert f",<{major}.{minor + 1}" in spec and f">={major}.{minor}" in spec, (spec, package["version"])
