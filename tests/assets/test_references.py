"""Which repository file an image source names."""

from __future__ import annotations

import pytest

from function.assets.references import repository_paths


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("/images/cat.png", ("images/cat.png",)),
        ("../images/cat.png", ("images/cat.png",)),
        ("./pics/cat.png", ("articles/pics/cat.png", "pics/cat.png")),
        ("images/cat.png", ("articles/images/cat.png", "images/cat.png")),
        ("/images/my%20cat.png?v=2#top", ("images/my cat.png",)),
    ],
)
def test_relative_and_root_relative_sources_name_repository_paths(
    src: str, expected: tuple[str, ...]
) -> None:
    assert repository_paths(src, "articles/pets.md") == expected


@pytest.mark.parametrize(
    "src",
    [
        "https://example.com/a.png",
        "//cdn.example.com/a.png",
        "data:image/png;base64,AAAA",
        "",
        "../../x.png",
        "/",
    ],
)
def test_urls_and_paths_outside_the_repository_name_nothing(src: str) -> None:
    assert repository_paths(src, "articles/pets.md") == ()
