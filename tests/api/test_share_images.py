"""``ogpUrl`` and ``description`` in every summary and article, and the share image in the feed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import feedparser
import pytest

from tests.api.conftest import USER, ReadApi
from tests.kit.builders import T0, article

TEMPLATE = "https://og.blog.example/card?title={title}&slug={slug}&by={user}"
DEFAULT = "https://blog.example.com/og-default.png"
THUMBNAIL = "https://images.example.com/cover.png"
CLOUDINARY = {
    "cloudinary_cloud_name": "blogcloud",
    "cloudinary_ogp_public_id": "og/base",
    "cloudinary_api_secret": "a-cloudinary-secret",
}


def served(api: ReadApi) -> dict[str, dict[str, Any]]:
    """Every answer that carries articles, by where it came from."""
    by_page = api.get(f"/users/{USER}/articles?page=1&perPage=10").get_json()["articles"]
    by_cursor = api.get(f"/users/{USER}/articles").get_json()["articles"]
    found = {f"page:{a['slug']}": a for a in by_page}
    found.update({f"cursor:{a['slug']}": a for a in by_cursor})
    for slug in {a["slug"] for a in by_page}:
        found[f"article:{slug}"] = api.get(f"/users/{USER}/articles/{slug}").get_json()
    return found


def seed(api: ReadApi) -> ReadApi:
    api.add(
        [
            replace(article("with-cover", title="Cover"), thumbnail=THUMBNAIL),
            replace(article("plain", title="Rust と Lambda, 100%/速い"), description=None),
        ],
        T0,
    )
    return api


def test_without_settings_a_thumbnail_is_the_share_image_and_else_it_is_empty(make_api: Any) -> None:
    api = seed(make_api())
    for where, entry in served(api).items():
        expected = THUMBNAIL if entry["slug"] == "with-cover" else ""
        assert entry["ogpUrl"] == expected, where
        assert entry["thumbnail"] == (THUMBNAIL if entry["slug"] == "with-cover" else None)


def test_a_missing_description_is_an_empty_string_everywhere(make_api: Any) -> None:
    api = seed(make_api())
    for where, entry in served(api).items():
        assert entry["description"] == ("" if entry["slug"] == "plain" else "about with-cover"), where


def test_the_template_gets_title_slug_and_user_url_encoded(make_api: Any) -> None:
    api = seed(make_api(ogp_image_url_template=TEMPLATE, ogp_default_image_url=DEFAULT, **CLOUDINARY))
    entries = served(api)
    assert {e["ogpUrl"] for k, e in entries.items() if e["slug"] == "plain"} == {
        "https://og.blog.example/card?title=Rust%20%E3%81%A8%20Lambda%2C%20100%25%2F%E9%80%9F%E3%81%84"
        "&slug=plain&by=alice"
    }
    assert {e["ogpUrl"] for e in entries.values() if e["slug"] == "with-cover"} == {THUMBNAIL}


def test_cloudinary_signs_a_card_when_no_template_is_set(make_api: Any) -> None:
    api = seed(make_api(ogp_default_image_url=DEFAULT, **CLOUDINARY))
    urls = {e["ogpUrl"] for e in served(api).values() if e["slug"] == "plain"}
    (url,) = urls
    assert url.startswith("https://res.cloudinary.com/blogcloud/image/upload/s--")
    assert url.endswith("/v1/og/base")
    assert (
        "l_text:Noto%20Sans%20JP_56_bold:Rust%20%E3%81%A8%20Lambda%252C%20100%25%252F%E9%80%9F%E3%81%84"
        in url
    )
    assert CLOUDINARY["cloudinary_api_secret"] not in url


def test_the_default_image_is_the_last_resort(make_api: Any) -> None:
    api = seed(make_api(ogp_default_image_url=DEFAULT))
    assert {e["ogpUrl"] for e in served(api).values() if e["slug"] == "plain"} == {DEFAULT}


@pytest.mark.parametrize("with_template", [True, False])
def test_the_feed_shows_the_same_share_image(make_api: Any, with_template: bool) -> None:
    settings = {"ogp_image_url_template": TEMPLATE} if with_template else {}
    api = seed(make_api(**settings))
    listed = {a["slug"]: a["ogpUrl"] for a in api.get(f"/users/{USER}/articles").get_json()["articles"]}

    feed = feedparser.parse(api.get(f"/users/{USER}/feed.xml").data)

    images = {
        e.link.rsplit("/", 1)[1]: [t["url"] for t in e.get("media_thumbnail", [])] for e in feed.entries
    }
    assert images == {slug: [url] if url else [] for slug, url in listed.items()}
