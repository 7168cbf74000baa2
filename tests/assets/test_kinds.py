"""An image's type comes from its bytes: the name never decides, and SVG is never served."""

from __future__ import annotations

import pytest

from function.assets.keys import asset_key, content_sha256, content_type_of, is_key
from function.assets.kinds import AVIF, GIF, JPEG, PNG, WEBP, ImageKind, detect, refusal
from tests.kit import images


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (images.png(), PNG),
        (images.JPEG, JPEG),
        (images.GIF, GIF),
        (images.WEBP, WEBP),
        (images.AVIF, AVIF),
    ],
)
def test_each_raster_type_is_read_from_its_magic_number(data: bytes, kind: ImageKind) -> None:
    assert detect(data) == kind


def test_svg_is_refused_with_a_reason_that_names_it() -> None:
    assert detect(images.SVG) is None
    assert "SVG is not served" in refusal(images.SVG)
    assert detect(b"<svg onload='alert(1)'/>") is None


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x89PNG",
        b"<html><script>alert(1)</script></html>",
        b"RIFF\x00\x00\x00\x00WAVEfmt ",
        b"%PDF-1.7",
    ],
)
def test_anything_else_is_not_an_image(data: bytes) -> None:
    assert detect(data) is None
    assert "not a PNG, JPEG, GIF, WebP or AVIF image" in refusal(data)


def test_an_html_file_named_png_is_still_refused() -> None:
    # GIVEN bytes that a browser would sniff as HTML, whatever the file is called
    data = b"<!doctype html><script>document.cookie</script>"
    # THEN no type is given to them, so they are never stored nor served
    assert detect(data) is None


def test_keys_are_content_addressed_and_well_formed() -> None:
    data = images.png()
    key = asset_key(content_sha256(data), PNG)
    assert key == f"{content_sha256(data)}.png" and is_key(key)
    assert content_type_of(key) == "image/png"
    assert asset_key(content_sha256(images.png((0, 0, 255))), PNG) != key


@pytest.mark.parametrize(
    "value",
    [
        "../etc/passwd",
        "a" * 64 + ".svg",
        "a" * 64 + ".png/x",
        "A" * 64 + ".png",
        "abc.png",
        "a" * 64 + ".html",
        "a" * 64 + ".png\n",  # a trailing newline: "$" would match before it
        "a" * 64 + ".png\r\n",
        "\n" + "a" * 64 + ".png",
    ],
)
def test_anything_but_a_key_is_not_one(value: str) -> None:
    assert not is_key(value)
    with pytest.raises(ValueError):
        content_type_of(value)
