"""The preview in a real browser: what an author sees of their repository, and a save reaching the page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import RunningPreview, diagram_drawn, wait_for
from tests.kit.images import png

# npm ci on a first run: more than a unit test's two minutes.
pytestmark = pytest.mark.timeout(600)

ARTICLE = """---
title: "Seen in a browser"
emoji: "🔭"
type: "tech"
topics: ["browser"]
published: true
---

![a red square](/images/red.png)

:::message
A message box.
:::

```mermaid
graph TD
  A[Save] --> B[Reload]
```

The formula $E = mc^2$ inline, and a block:

$$
\\int_0^1 x \\, dx = \\frac{1}{2}
$$

```py:hello.py
print("hi")
```

https://example.com/some/page
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "articles").mkdir(parents=True)
    (root / "images").mkdir()
    (root / "articles" / "seen.md").write_text(ARTICLE, encoding="utf-8")
    (root / "images" / "red.png").write_bytes(png((220, 30, 30)))
    return root


@pytest.fixture
def running(folder: Path, browser: Any, mermaid_dist: Path) -> Iterator[RunningPreview]:
    preview = RunningPreview(folder, mermaid_dist / "mermaid.min.js")
    try:
        yield preview
    finally:
        preview.stop()


def test_an_article_shows_its_image_message_diagram_and_formula(running: RunningPreview, page: Any) -> None:
    page.get(f"{running.url}/articles/seen")

    # The diagram is drawn: mermaid replaced its source with an SVG.
    drawn = wait_for(page, diagram_drawn("Reload"), "mermaid drew no SVG")
    assert drawn["width"] > 50 and drawn["height"] > 50
    assert (
        page.execute_script("return document.querySelectorAll('.blog-content .mermaid foreignObject').length")
        == 0
    )
    # The image loaded from the preview's own /assets.
    assert page.execute_script(
        "const img = document.querySelector('.blog-content img[alt=\"a red square\"]');"
        "return img.complete && img.naturalWidth > 0 && img.src.includes('/assets/');"
    )
    # The message box and the formulas are there, laid out (MathML drawn by the browser).
    assert page.find_element("css selector", ".blog-content aside.msg").text == "A message box."
    sizes = page.execute_script(
        "return [...document.querySelectorAll('.blog-content math')]"
        ".map(m => [m.getBoundingClientRect().width, m.getBoundingClientRect().height]);"
    )
    assert len(sizes) == 2 and all(w > 10 and h > 5 for w, h in sizes)


COMPUTED = """
const [selector, tag, classes] = arguments;
const styled = document.querySelector(selector);
// The same element outside .blog-content: what the browser gives it without our stylesheet.
const bare = document.createElement(tag);
bare.className = classes;
bare.textContent = styled.textContent;
document.body.appendChild(bare);
const names = ['background-color', 'padding-left', 'border-left-width', 'border-top-width', 'display',
               'border-radius', 'font-family', 'font-size', 'color'];
const pick = (el) => Object.fromEntries(names.map(n => [n, getComputedStyle(el).getPropertyValue(n)]));
const result = [pick(styled), pick(bare)];
bare.remove();
return result;
"""


@pytest.mark.parametrize(
    ("selector", "tag", "classes", "properties"),
    [
        (".blog-content aside.msg", "aside", "msg message", {"background-color", "padding-left"}),
        (".blog-content a.link-card", "a", "link-card", {"display", "border-top-width", "padding-left"}),
        (
            ".blog-content .code-block-filename",
            "span",
            "code-block-filename",
            {"background-color", "font-family", "display"},
        ),
    ],
)
def test_content_css_gives_boxes_cards_and_file_labels_their_own_look(
    running: RunningPreview, page: Any, selector: str, tag: str, classes: str, properties: set[str]
) -> None:
    page.get(f"{running.url}/articles/seen")

    styled, default = page.execute_script(COMPUTED, selector, tag, classes)

    differing = {name for name in properties if styled[name] != default[name]}
    assert differing == properties, (styled, default)


def test_dark_mode_follows_the_system_and_a_class_forces_light(running: RunningPreview, page: Any) -> None:
    page.get(f"{running.url}/articles/seen")
    background = "return getComputedStyle(document.querySelector('.blog-content')).backgroundColor"
    light = page.execute_script(background)

    page.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    dark = page.execute_script(background)
    page.execute_script("document.documentElement.classList.add('blog-content-light')")
    forced = page.execute_script(background)

    assert light == "rgb(255, 255, 255)"
    assert dark != light
    assert forced == light


def test_a_saved_edit_reaches_the_open_page(running: RunningPreview, folder: Path, page: Any) -> None:
    page.get(f"{running.url}/articles/seen")
    wait_for(page, diagram_drawn("Reload"), "mermaid drew no SVG")
    # A mark that only this load of the page carries: gone once the page reloaded itself.
    page.execute_script("window.beforeTheEdit = true")

    article = folder / "articles" / "seen.md"
    article.write_text(ARTICLE.replace("A message box.", "An edited message box."), encoding="utf-8")

    wait_for(
        page,
        lambda d: d.execute_script(
            "const box = document.querySelector('.blog-content aside.msg');"
            "return !window.beforeTheEdit && box && box.textContent.includes('An edited message box.');"
        ),
        "the open page did not show the edit",
    )


def test_the_list_page_marks_a_draft(running: RunningPreview, folder: Path, page: Any) -> None:
    (folder / "articles" / "later.md").write_text(
        '---\ntitle: "Later"\npublished: false\n---\nx\n', encoding="utf-8"
    )
    page.get(f"{running.url}/")

    wait_for(
        page,
        lambda d: "Later" in d.find_element("css selector", "ul.articles").text,
        "the draft is not listed",
    )
    entry = page.find_element("css selector", 'li[data-slug="later"]')
    assert "draft" in entry.text
