"""libyaml's loader and the pure one give the same article, or the same error, for any front matter."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles.front_matter_yaml import YamlLoader, yaml_loaders
from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError

from .helpers import SHA
from .test_properties import front_matters, yaml_ish_text

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="this PyYAML has no libyaml")

SAME = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(data: bytes, loader: YamlLoader) -> ParsedArticle | str:
    try:
        return parse_article("articles/x.md", SHA, data, yaml_loader=loader)
    except ArticleParseError as exc:
        return f"error: {exc}"


def _same_on_both(front: str) -> None:
    data = f"---\n{front}\n---\nbody\n".encode("utf-8", "surrogatepass")
    loaders = yaml_loaders()
    assert _outcome(data, loaders["libyaml"]) == _outcome(data, loaders["pure"])


def test_the_fastest_loader_is_the_default() -> None:
    data = b"---\ntitle: x\n---\nbody\n"
    assert list(yaml_loaders()) == ["libyaml", "pure"]
    assert parse_article("articles/x.md", SHA, data) == _outcome(data, yaml_loaders()["libyaml"])


@SAME
@given(yaml_ish_text)
def test_yaml_ish_text_gives_the_same_outcome(front: str) -> None:
    _same_on_both(front)


# Anchors, aliases, tags, tabs and block scalars, which is where the two scanners part ways.
yaml_corners = st.lists(
    st.sampled_from(
        [
            *"|>#-+0123456789:[]{}'\"\t\n ",
            "title: ",
            "tags: ",
            "!!python/object ",
            "!!str ",
            "! ",
            "&a ",
            "*a",
        ]
    ),
    max_size=40,
).map("".join)


@SAME
@given(yaml_corners)
def test_anchors_tags_and_block_scalars_give_the_same_outcome(front: str) -> None:
    _same_on_both(front)


@SAME
@given(front_matters)
def test_dumped_front_matter_gives_the_same_outcome(meta: dict[str, Any]) -> None:
    _same_on_both(yaml.safe_dump(meta, allow_unicode=True))


@pytest.mark.parametrize(
    "front",
    [
        "title: !",  # libyaml alone would read '' (then "title is required" vs a clean null)
        "title: x\ntags:\n- !\n- ! a",
        "title: x\ndescription: ! ''",
        "title: ! '12'",
        "title: x\npublish: !",
        "title: [unclosed",  # an error: worded the pure loader's way on both
        "title: x\n\tbad: tab",
        "title: 2024-13-45",
        "title: &a x\nother: *a",
        "title: *undefined",
    ],
)
def test_corner_cases_give_the_same_outcome(front: str) -> None:
    _same_on_both(front)
