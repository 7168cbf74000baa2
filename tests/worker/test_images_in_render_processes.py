"""Images stored by blog-api do not keep a first sync in one process: the articles render in the
render processes, each image source is resolved in the sync's own process (where the asset pass, its
store and its uploads live), and the HTML, the warnings and the references are what rendering in one
process gives."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from function.articles.parallel_parse import MIN_FILES_FOR_PROCESSES
from function.assets.folder import FolderAssetStore
from function.services import Services
from function.settings import Settings
from function.store.asset_records import AssetRecords
from function.worker.sync import SyncSummary
from tests.kit import images
from tests.kit.blog_fixtures import USER, Blog, article

RED, BLUE, GREEN = images.png((255, 0, 0)), images.png((0, 0, 255)), images.png((0, 255, 0))
ARTICLES = 2 * MIN_FILES_FOR_PROCESSES  # enough for the render processes


class ForkCounter:
    """Counts the processes this process forks while ``counting`` (os.register_at_fork cannot be
    undone, so one counter serves the module)."""

    def __init__(self) -> None:
        self.counting = False
        self.forks = 0
        os.register_at_fork(after_in_parent=self._forked)

    def _forked(self) -> None:
        if self.counting:
            self.forks += 1


FORKS = ForkCounter()


def body(i: int) -> str:
    """Every kind of source: stored images, one outside the images folder (stored when first met), a
    missing one, a refused one, a URL, and the same image twice."""
    own = "./pics/green.png" if i % 3 == 0 else f"/images/{'red' if i % 2 else 'blue'}.png"
    return "\n\n".join(
        [
            f"# Article {i}",
            f"![own]({own})",
            "![cat](/images/red.png) and again ![cat](/images/red.png)",
            "![missing](/images/missing.png)" if i % 4 == 0 else "No missing image here.",
            "![logo](/images/logo.svg)" if i % 5 == 0 else "No refused image here.",
            "![far](https://example.com/far.png)",
        ]
    )


def sync(blog: Blog, processes: int, *, rebuild: bool = False) -> tuple[SyncSummary, int]:
    settings = Settings(**{**blog.settings.__dict__, "render_processes": processes})
    services = Services(settings, source=blog.source, database=blog.db, asset_store=blog.asset_store)
    FORKS.forks, FORKS.counting = 0, True
    try:
        with services.store() as store:
            summary = services.worker(store).sync_user(USER, rebuild=rebuild)
    finally:
        FORKS.counting = False
    return summary, FORKS.forks


def rendered(blog: Blog) -> dict[str, str]:
    return {a["slug"]: blog.article(a["slug"])["contentHtml"] for a in blog.articles()}


def references(blog: Blog) -> Any:
    with blog.store() as store:
        return AssetRecords(store.db).load(store.users.get_user(USER).id)  # type: ignore[union-attr]


def warnings(summary: SyncSummary) -> list[tuple[str, str]]:
    return [(w.path, w.message) for w in summary.warnings]


@pytest.mark.parametrize("first", [2, 1])
def test_render_processes_resolve_images_exactly_as_this_process_does(
    blog: Blog, tmp_path: Path, first: int
) -> None:
    # GIVEN a repository whose articles show images of every kind, stored by blog-api
    blog.asset_store = FolderAssetStore(tmp_path / "stored")
    files: dict[str, bytes | None] = {
        f"articles/a{i:02}.md": article(f"A{i}", body=body(i)) for i in range(ARTICLES)
    }
    files |= {"images/red.png": RED, "images/blue.png": BLUE, "articles/pics/green.png": GREEN}
    files["images/logo.svg"] = images.SVG
    blog.commit(files)

    # WHEN its first sync renders in one way, and a rebuild renders everything again in the other
    second = 3 - first
    before, forks_before = sync(blog, first)
    html_before, refs_before = rendered(blog), references(blog)
    again, forks_again = sync(blog, second, rebuild=True)

    # THEN both ways give the same bytes, the same warnings and the same references
    assert {forks_before, forks_again} == {0, 2}  # two render processes one time, none the other
    assert rendered(blog) == html_before
    assert warnings(again) == warnings(before)
    assert references(blog) == refs_before
    assert before.failed == again.failed == 0 and before.written == ARTICLES
    # and the images did resolve: to the stored keys, the one outside the folder stored when first met
    html = html_before["a03"]
    assert "/assets/" in html and "./pics/green.png" not in html and "https://example.com/far.png" in html
    assert any("images/missing.png: no such file" in message for _, message in warnings(before))
    assert any("images/logo.svg: SVG is not served" in message for _, message in warnings(before))
