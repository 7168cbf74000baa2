"""An author's repository on disk and its preview, without a browser (tests/browser/ has those)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from function.preview.server import preview_app
from function.preview.session import Preview
from tests.kit.images import png

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

ARTICLE_WITH_EVERYTHING = """---
title: "Everything at once"
emoji: "🧪"
type: "tech"
topics: ["aws", "lambda"]
published: true
published_at: 2024-03-01 09:30
---

## A picture

![a red square](/images/red.png)

:::message
Remember this.
:::

```mermaid
graph TD
  A[Save] --> B[Reload]
```

Energy: $E = mc^2$

```py:hello.py
print("hi")
```

https://example.com/some/page
"""


@dataclass
class Repository:
    root: Path

    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target


@pytest.fixture
def repository(tmp_path: Path) -> Repository:
    """A Zenn repository: the books fixture (an article, three books, one a draft), one article with an
    image, a message, a diagram, a formula, a file label and a link card, and a draft."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "zenn-books", root, ignore=shutil.ignore_patterns("SOURCES.txt"))
    repo = Repository(root)
    repo.write("articles/everything.md", ARTICLE_WITH_EVERYTHING)
    repo.write(
        "articles/work-in-progress.md",
        '---\ntitle: "Not yet"\ntopics: ["draft"]\npublished: false\n---\nSoon.\n',
    )
    (root / "images").mkdir()
    (root / "images" / "red.png").write_bytes(png((255, 0, 0)))
    return repo


@dataclass
class Previewed:
    preview: Preview
    client: FlaskClient

    def page(self, path: str) -> str:
        response = self.client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        return response.get_data(as_text=True)


@pytest.fixture
def previewed(tmp_path: Path, repository: Repository) -> Iterator[Callable[..., Previewed]]:
    """``previewed(**environ)``: the repository's preview after its first sync, and a client of its app."""
    made: list[Preview] = []

    def make(**environ: str) -> Previewed:
        scratch = tmp_path / f"scratch{len(made)}"
        scratch.mkdir()
        preview = Preview(repository.root, scratch, environ)
        preview.create_store()
        preview.sync()
        made.append(preview)
        return Previewed(preview, preview_app(preview).test_client())

    yield make
    for preview in made:
        database = preview.services.database()
        if not database.is_closed():
            database.close()
