"""The blog's original front end, replayed: the exact requests its pages make, and what it reads from each
answer. Written from what that front end calls and reads, not from our implementation:

- the index page: ``?page=1&perPage=10`` with, in the same ``Promise.all``, the tag facets;
- ``/page/3`` filtered by two tags in OR mode (``tags`` comma-separated, each URL-encoded), facets with the
  same filter;
- the sitemap asks for ``perPage=all``, the feed for ``perPage=20``;
- an article page, and an article that is not there (read as "not found").

Each summary and article carries ``articleId``, ``title``, ``slug``, ``description`` (always a string),
``thumbnail`` (string or null), ``ogpUrl`` (always a string), ``tags``, ``publishedAt``, ``createdAt``,
``updatedAt``; a list adds ``totalCount``, ``page``, ``perPage`` and ``totalPages``, from which the numbered
pager is built.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import pytest

from tests.api.conftest import USER, ReadApi
from tests.kit.builders import article, at

BASE = f"/users/{USER}"
AWS = "tech/aws"
JAPANESE = "言語/日本語"
# encodeURIComponent of each tag, joined by a raw comma, as the front end builds the query.
TWO_TAGS = "tags=tech%2Faws,%E8%A8%80%E8%AA%9E%2F%E6%97%A5%E6%9C%AC%E8%AA%9E&mode=or"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
COUNT = 45


@pytest.fixture
def blog(make_api: Any) -> ReadApi:
    api: ReadApi = make_api(ogp_default_image_url="https://blog.example.com/og.png")
    for i in range(COUNT):
        tags = tuple(t for t, on in ((AWS, i % 3 == 0), (JAPANESE, i % 5 == 0), ("life", i % 2 == 1)) if on)
        parsed = article(f"post-{i:02}", tags=tags)
        if i % 4 == 0:
            parsed = replace(parsed, description=None, thumbnail=f"https://img.example.com/{i}.png")
        api.add([parsed], at(i * 60))
    api.add([article("draft", tags=(AWS,), publish=False)], at(9999))
    return api


def fetch(api: ReadApi, path: str) -> dict[str, Any]:
    answer = api.get(path)
    assert answer.status_code == 200, (path, answer.get_json())
    assert answer.headers["Content-Type"].startswith("application/json")
    body: dict[str, Any] = answer.get_json()
    return body


def check_summary(entry: dict[str, Any]) -> None:
    for key in ("articleId", "title", "slug", "description", "ogpUrl"):
        assert isinstance(entry[key], str), key
    assert entry["thumbnail"] is None or isinstance(entry["thumbnail"], str)
    assert isinstance(entry["tags"], list) and all(isinstance(t, str) for t in entry["tags"])
    for key in ("publishedAt", "createdAt", "updatedAt"):
        assert ISO.match(entry[key]), entry[key]
    # The share image: the thumbnail when there is one, else the site's default.
    assert entry["ogpUrl"] == (entry["thumbnail"] or "https://blog.example.com/og.png")


def check_list(body: dict[str, Any], *, page: int, per_page: int, total: int) -> list[str]:
    assert (body["totalCount"], body["page"], body["perPage"]) == (total, page, per_page)
    assert body["totalPages"] == math.ceil(total / per_page)
    expected_size = max(0, min(per_page, total - (page - 1) * per_page))
    assert len(body["articles"]) == expected_size
    for entry in body["articles"]:
        check_summary(entry)
    return [entry["slug"] for entry in body["articles"]]


def newest_first(indexes: list[int]) -> list[str]:
    return [f"post-{i:02}" for i in sorted(indexes, reverse=True)]


def test_the_index_page_and_its_facets(blog: ReadApi) -> None:
    listed = fetch(blog, f"{BASE}/articles?page=1&perPage=10")
    facets = fetch(blog, f"{BASE}/articles/tag-facets")

    assert check_list(listed, page=1, per_page=10, total=COUNT) == newest_first(list(range(COUNT)))[:10]
    assert facets == {
        "facets": [
            {"path": "life", "count": 22},
            {"path": "tech", "count": 15},
            {"path": "tech/aws", "count": 15},
            {"path": "言語", "count": 9},
            {"path": "言語/日本語", "count": 9},
        ]
    }


def test_page_3_filtered_by_two_tags_in_or_mode_and_its_facets(blog: ReadApi) -> None:
    kept = [i for i in range(COUNT) if i % 3 == 0 or i % 5 == 0]

    listed = fetch(blog, f"{BASE}/articles?page=3&perPage=10&{TWO_TAGS}")
    facets = fetch(blog, f"{BASE}/articles/tag-facets?{TWO_TAGS}")

    assert check_list(listed, page=3, per_page=10, total=len(kept)) == newest_first(kept)[20:]
    counts = {f["path"]: f["count"] for f in facets["facets"]}
    assert counts == {
        "tech": 15,
        "tech/aws": 15,
        "言語": 9,
        "言語/日本語": 9,
        "life": len([i for i in kept if i % 2 == 1]),
    }
    assert [f["count"] for f in facets["facets"]] == sorted(counts.values(), reverse=True)


def test_the_sitemap_asks_for_every_article(blog: ReadApi) -> None:
    listed = fetch(blog, f"{BASE}/articles?perPage=all")
    assert check_list(listed, page=1, per_page=500, total=COUNT) == newest_first(list(range(COUNT)))


def test_the_feed_asks_for_the_20_newest(blog: ReadApi) -> None:
    listed = fetch(blog, f"{BASE}/articles?perPage=20")
    assert check_list(listed, page=1, per_page=20, total=COUNT) == newest_first(list(range(COUNT)))[:20]


def test_an_article_page(blog: ReadApi) -> None:
    found = fetch(blog, f"{BASE}/articles/post-12")
    check_summary(found)
    assert (found["slug"], found["description"], found["thumbnail"]) == (
        "post-12",
        "",
        "https://img.example.com/12.png",
    )
    assert found["ogpUrl"] == "https://img.example.com/12.png"
    assert isinstance(found["contentHtml"], str) and found["tags"] == [AWS]


def test_an_article_that_is_not_there_is_a_404(blog: ReadApi) -> None:
    for slug in ("no-such-post", "draft"):
        answer = blog.get(f"{BASE}/articles/{slug}")
        assert answer.status_code == 404
        assert answer.get_json()["error"] == "NOT_FOUND"
