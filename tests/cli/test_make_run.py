"""``make run``: installs only what serving needs, and serves where PORT and HOST say."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(*args: str) -> list[str]:
    """The commands ``make run`` would run from a fresh clone (``-n``: printed, not run; ``-B``: as if
    nothing were installed yet), in a venv path that does not exist."""
    result = subprocess.run(
        ["make", "-n", "-B", "run", "VENV=/nonexistent/venv", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.splitlines()


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
