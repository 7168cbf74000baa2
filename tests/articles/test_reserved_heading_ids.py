"""A heading never takes an id a front end reads (``root``, ``app``, ``__next``…): it is numbered as a
duplicate would be, and the table of contents follows. The raw-HTML path already refuses such ids; a
heading reached them by its text (DOM clobbering: ``# config`` defined ``window.config``)."""

from __future__ import annotations

import re

import pytest

from function.articles.ids import RESERVED_IDS
from function.articles.render import render_article

NAMED_IN_THE_REVIEW = ["root", "app", "__next", "__nuxt", "__NEXT_DATA__", "config"]


@pytest.mark.parametrize("name", NAMED_IN_THE_REVIEW + sorted(RESERVED_IDS))
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_a_heading_named_like_a_front_ends_id_is_numbered(name: str, level: int) -> None:
    # In backticks: "__x__" would be bold, and the id that of "x".
    rendered = render_article(f"{'#' * level} `{name}`\n")
    [given] = re.findall(r'<h\d id="([^"]*)"', rendered.html)
    assert given == f"{name.lower()}-1"
    assert given.lower() not in RESERVED_IDS
    if level <= 3:
        assert [entry.id for entry in rendered.toc] == [given]


def test_the_numbering_goes_on_as_for_duplicates_and_the_toc_follows() -> None:
    rendered = render_article("# Root\n## root\n## root-1\n### App\n## intro\n")
    ids = re.findall(r'<h\d id="([^"]*)"', rendered.html)
    assert ids == ["root-1", "root-2", "root-1-1", "app-1", "intro"]
    assert [entry.id for entry in rendered.toc] == ids


def test_reserved_ids_cover_what_the_review_named() -> None:
    assert {name.lower() for name in NAMED_IN_THE_REVIEW} <= RESERVED_IDS
