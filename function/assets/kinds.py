"""An image's type from its first bytes (magic numbers), never from its name.

Only raster formats a browser shows as an image and never runs: PNG, JPEG, GIF, WebP and AVIF. SVG is
refused: it is a document that can hold script, and serving it safely would take a sandboxing
``Content-Security-Policy`` on every store and every CDN in front of it; authors can export a PNG.
"""

from __future__ import annotations

from dataclasses import dataclass

# Enough for every signature below (AVIF's brand sits at bytes 8-12).
SNIFF_BYTES = 32


@dataclass(frozen=True)
class ImageKind:
    content_type: str
    extension: str  # of the stored key: "<sha256>.<extension>"


PNG = ImageKind("image/png", "png")
JPEG = ImageKind("image/jpeg", "jpg")
GIF = ImageKind("image/gif", "gif")
WEBP = ImageKind("image/webp", "webp")
AVIF = ImageKind("image/avif", "avif")
KINDS = (PNG, JPEG, GIF, WEBP, AVIF)
_AVIF_BRANDS = (b"avif", b"avis")


def detect(data: bytes) -> ImageKind | None:
    """The image type ``data`` starts with, or None for anything else (SVG included)."""
    head = data[:SNIFF_BYTES]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return WEBP
    if head[4:8] == b"ftyp" and head[8:12] in _AVIF_BRANDS:
        return AVIF
    return None


def refusal(data: bytes) -> str:
    """Why ``data`` (for which ``detect`` found no type) is not served, in words for the author."""
    text = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith(b"<svg") or (text.startswith(b"<?xml") and b"<svg" in text):
        return "SVG is not served (it can carry script): export it as PNG or WebP"
    return "not a PNG, JPEG, GIF, WebP or AVIF image (the type is read from the content, not the name)"


def kind_of_extension(extension: str) -> ImageKind | None:
    """The kind a stored key's extension stands for."""
    for kind in KINDS:
        if kind.extension == extension:
            return kind
    return None
