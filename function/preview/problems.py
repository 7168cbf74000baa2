"""What went wrong with which file, as the preview shows it on that file's page.

A sync reports every file that fails (remembered failures included), so failures are replaced whole
after each sync. Warnings come only from the files a sync read, so each is kept until its file, its
book or an image it names changes again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from function.articles.book_paths import BOOKS_DIR


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    failed: bool  # True: the file could not be synced (readers see its last good version, or nothing)


class Problems:
    """The latest failures and warnings per repository path, and the one error of the whole sync."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: list[Problem] = []
        self._warnings: dict[str, list[Problem]] = {}
        self.sync_error: str | None = None

    def record(
        self,
        failures: Sequence[tuple[str, str]],
        warnings: Sequence[tuple[str, str]],
        *,
        read_again: Iterable[str] | None,
    ) -> None:
        """After a sync: ``failures`` and ``warnings`` as (path, message); ``read_again`` the paths that
        changed since the last sync (None: every file was read, the first sync)."""
        with self._lock:
            self._failures = [Problem(path, message, True) for path, message in failures]
            if read_again is None:
                self._warnings = {}
            else:
                self._forget_warnings(set(read_again))
            for path, message in warnings:
                self._warnings.setdefault(path, []).append(Problem(path, message, False))
            self.sync_error = None

    def _forget_warnings(self, changed: set[str]) -> None:
        books = {_book_of(path) for path in changed} - {None}
        for path in list(self._warnings):
            kept = [
                problem
                for problem in self._warnings[path]
                if path not in changed
                and _book_of(path) not in books
                and not any(name in problem.message for name in changed)
            ]
            if kept:
                self._warnings[path] = kept
            else:
                del self._warnings[path]

    def of_file(self, path: str) -> list[Problem]:
        with self._lock:
            return [p for p in self._failures if p.path == path] + list(self._warnings.get(path, ()))

    def of_book(self, slug: str) -> list[Problem]:
        prefix = f"{BOOKS_DIR}/{slug}/"
        with self._lock:
            found = [p for p in self._failures if p.path.startswith(prefix)]
            for path, problems in sorted(self._warnings.items()):
                if path.startswith(prefix):
                    found += problems
            return found

    def everything(self) -> list[Problem]:
        with self._lock:
            warnings = [p for _, problems in sorted(self._warnings.items()) for p in problems]
            return [*self._failures, *warnings]

    def failed_paths(self) -> set[str]:
        with self._lock:
            return {p.path for p in self._failures}


def _book_of(path: str) -> str | None:
    parts = path.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == BOOKS_DIR else None
