"""The signed Cloudinary card: the same URL, signature included, as Cloudinary's own SDK makes for the
same transformation, whatever the title."""

from __future__ import annotations

import re

import cloudinary.utils
from hypothesis import given, settings
from hypothesis import strategies as st

from function.ogp.cloudinary import MAX_TITLE_CHARS, CloudinaryCards

SECRET = "a-cloudinary-api-secret"


def sdk_url(cards: CloudinaryCards, text: str) -> str:
    """The card as the SDK builds it: the same three steps, written as its options."""
    url, _ = cloudinary.utils.cloudinary_url(
        cards.base_public_id,
        cloud_name=cards.cloud_name,
        api_secret=cards.api_secret,
        sign_url=True,
        secure=True,
        transformation=[
            {"crop": "fill", "height": 630, "width": 1200},
            {
                "color": "rgb:ffffff",
                "crop": "fit",
                "width": 1000,
                "overlay": {
                    "font_family": "Noto%20Sans%20JP",
                    "font_size": 56,
                    "font_weight": "bold",
                    "text": text,
                },
            },
            {"flags": "layer_apply", "gravity": "center"},
        ],
    )
    assert isinstance(url, str)
    return url


# Titles of every kind: the layer's separators, URL syntax, percent signs, Japanese, emoji, blanks.
titles = (
    st.text(
        alphabet=st.one_of(
            st.sampled_from(list(",/?#&%+:;=@!'\"()[]<>_.-~ 　\t")), st.characters(codec="utf-8")
        ),
        min_size=1,
        max_size=MAX_TITLE_CHARS - 5,
    )
    .map(lambda t: " ".join(t.split()))
    .filter(
        # Cloudinary's SDK reads "$(name)" in a text as a user variable; our cards write the title as it is.
        lambda t: bool(t) and not re.search(r"\$\([a-zA-Z]\w+\)", t)
    )
)


@settings(max_examples=300, deadline=None)
@given(title=titles, public_id=st.sampled_from(["og-base", "blog/og/base", "v3/base", "with space/é"]))
def test_a_card_is_the_url_cloudinarys_sdk_signs(title: str, public_id: str) -> None:
    cards = CloudinaryCards("blog-cloud", public_id, SECRET)
    assert cards.url(title) == sdk_url(cards, title)


def test_the_signature_depends_on_the_secret_and_the_text() -> None:
    one = CloudinaryCards("blog-cloud", "og-base", SECRET)
    other = CloudinaryCards("blog-cloud", "og-base", SECRET + "x")
    signature = re.compile(r"/s--([A-Za-z0-9_-]{8})--/")
    a, b, c = (signature.search(u) for u in (one.url("Hello"), other.url("Hello"), one.url("Hello!")))
    assert a and b and c
    assert len({a.group(1), b.group(1), c.group(1)}) == 3
    assert SECRET not in one.url("Hello") and SECRET not in repr(one)


def test_commas_and_slashes_are_escaped_twice_and_japanese_once() -> None:
    url = CloudinaryCards("blog-cloud", "og-base", SECRET).url("Rust, Lambda/TiDB 入門")
    assert ":Rust%252C%20Lambda%252FTiDB%20%E5%85%A5%E9%96%80," in url


def test_a_long_title_is_cut_with_an_ellipsis() -> None:
    cards = CloudinaryCards("blog-cloud", "og-base", SECRET)
    long_title = "word " * 60
    url = cards.url(long_title)
    assert url == sdk_url(cards, ("word " * 20).strip() + "…")
    assert len(url) < 500
