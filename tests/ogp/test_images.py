"""Which share image an article gets: its thumbnail, the template, a Cloudinary card, the default, or ""."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from function.ogp.cloudinary import CloudinaryCards
from function.ogp.images import OgpImages, ogp_images
from function.settings import Settings

CARDS = CloudinaryCards("blog-cloud", "og-base", "secret")
ARTICLE = {
    "user": "ぶろぐ/太郎",
    "slug": "rust-lambda",
    "title": "Rust & Lambda: 50% faster?",
    "thumbnail": None,
}


@pytest.mark.parametrize(
    ("images", "expected"),
    [
        (OgpImages(), ""),
        (OgpImages(default="https://blog.example.com/og.png"), "https://blog.example.com/og.png"),
        (OgpImages(cloudinary=CARDS, default="https://x.example/d.png"), CARDS.url(ARTICLE["title"])),  # type: ignore[arg-type]
        (
            OgpImages(
                template="https://og.example/{slug}.png", cloudinary=CARDS, default="https://x.example/d"
            ),
            "https://og.example/rust-lambda.png",
        ),
    ],
)
def test_without_a_thumbnail_the_first_configured_source_wins(images: OgpImages, expected: str) -> None:
    assert images.url(**ARTICLE) == expected  # type: ignore[arg-type]
    with_thumbnail = {**ARTICLE, "thumbnail": "https://img.example/cover.png"}
    assert images.url(**with_thumbnail) == "https://img.example/cover.png"  # type: ignore[arg-type]


def test_the_template_gets_each_value_url_encoded() -> None:
    images = OgpImages(template="https://og.example/card?t={title}&u={user}&s={slug}&x={{literal}}")
    url = images.url(**ARTICLE)  # type: ignore[arg-type]
    query = parse_qs(urlsplit(url).query)
    assert query["t"] == ["Rust & Lambda: 50% faster?"]
    assert query["u"] == ["ぶろぐ/太郎"]
    assert query["s"] == ["rust-lambda"]
    assert query["x"] == ["{literal}"]
    assert "&" not in url.split("t=", 1)[1].split("&u=", 1)[0]


def test_the_settings_make_the_choice() -> None:
    configured = Settings(
        webhook_secret="s",
        ogp_default_image_url="https://blog.example.com/og.png",
        cloudinary_cloud_name="blog-cloud",
        cloudinary_ogp_public_id="og-base",
        cloudinary_api_secret="secret",
    )
    assert ogp_images(configured) == OgpImages(None, CARDS, "https://blog.example.com/og.png")
    assert ogp_images(Settings(webhook_secret="s")) == OgpImages()
