"""Checks of the GitHub Actions workflows and of the dev-hold script they run, without GitHub or network."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
WORKFLOW_FILES = (WORKFLOWS / "ci.yaml", WORKFLOWS / "deploy.yaml")
DEV_HOLD_SCRIPT = REPO / ".github" / "scripts" / "dev_hold.py"
PROMOTE_SCRIPT = REPO / ".github" / "scripts" / "promote.py"


def load_dev_hold() -> ModuleType:
    """Import ``.github/scripts/dev_hold.py`` (not on the import path: ``.github`` is not a package name)."""
    return load_script("dev_hold", DEV_HOLD_SCRIPT)


def load_promote() -> ModuleType:
    """Import ``.github/scripts/promote.py``."""
    return load_script("promote", PROMOTE_SCRIPT)


def load_script(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before running it: dataclasses look their module up in sys.modules.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
