"""Real git repositories with the commit dates a test chooses (``GIT_AUTHOR_DATE`` / ``GIT_COMMITTER_DATE``),
for what blog-api reads from a repository's history."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

# Nothing of the machine's git configuration reaches these repositories.
_ISOLATED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
}


class GitRepo:
    """A work tree at ``root``: files written and committed at the dates given."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        result = subprocess.run(
            ["git", "-c", "core.autocrlf=false", *args],
            cwd=self.root,
            env={**os.environ, **_ISOLATED, **(env or {})},
            check=True,
            capture_output=True,
            text=True,
        )
        return result.stdout

    def write(self, path: str, content: str | bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
        return target

    def commit(
        self,
        at: datetime | str,
        files: Mapping[str, str | bytes] | None = None,
        *,
        remove: Sequence[str] = (),
        rename: Mapping[str, str] | None = None,
        author_at: datetime | str | None = None,
        message: str = "change",
    ) -> str:
        """Write ``files``, remove and rename as told, and commit everything with the committer date
        ``at`` (and the author date ``author_at``, ``at`` unless given); the commit's SHA."""
        for path, content in (files or {}).items():
            self.write(path, content)
        for path in remove:
            self.git("rm", "-q", path)
        for old, new in (rename or {}).items():
            (self.root / new).parent.mkdir(parents=True, exist_ok=True)
            self.git("mv", old, new)
        self.git("add", "-A")
        dates = {
            "GIT_AUTHOR_DATE": _iso(author_at if author_at is not None else at),
            "GIT_COMMITTER_DATE": _iso(at),
        }
        self.git("commit", "-q", "--allow-empty", "-m", message, env=dates)
        return self.git("rev-parse", "HEAD").strip()


def _iso(value: datetime | str) -> str:
    return value if isinstance(value, str) else value.isoformat()
