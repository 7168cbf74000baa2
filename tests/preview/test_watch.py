"""The folder watcher: a save re-syncs the folder without anyone asking."""

from __future__ import annotations

import time
from collections.abc import Callable

from function.preview.watch import watch_in_background
from tests.preview.conftest import Previewed, Repository

# How long a test waits for the watcher at most: far above the ~0.3 s it takes, never a speed check.
PATIENCE_S = 20.0


def wait_until(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_saved_file_is_synced_and_its_page_follows(
    repository: Repository, previewed: Callable[..., Previewed]
) -> None:
    view = previewed()
    said: list[str] = []
    watching = watch_in_background(view.preview, said.append)
    try:
        before = view.preview.version
        # WHEN the author saves an edit
        repository.write("articles/work-in-progress.md", '---\ntitle: "Saved"\npublished: false\n---\nNow.\n')

        # THEN the preview syncs it by itself, says so, and the page shows it
        assert wait_until(lambda: view.preview.version > before), said
        assert "Saved" in view.page("/articles/work-in-progress")
        assert any(line.startswith("changed articles/work-in-progress.md: synced") for line in said)
    finally:
        watching.stop()


def test_a_new_article_appears_in_the_list(
    repository: Repository, previewed: Callable[..., Previewed]
) -> None:
    view = previewed()
    watching = watch_in_background(view.preview, lambda line: None)
    try:
        repository.write("articles/brand-new.md", '---\ntitle: "Brand new"\npublished: true\n---\nHello.\n')

        assert wait_until(lambda: "Brand new" in view.page("/"))
    finally:
        watching.stop()
