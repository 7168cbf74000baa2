"""A signed Cloudinary URL that writes an article's title over a base image: the share card of an
article without a thumbnail.

Cloudinary renders the card on its first request and caches it. The URL is signed as Cloudinary documents
for delivery URLs ("signed delivery URLs"): ``s--`` + the first 8 characters of the URL-safe base64 of
SHA-1(transformation + "/" + public id + API secret) + ``--``; Cloudinary then refuses any transformation
that was not signed, so nobody can make the account render (and pay for) text of their choosing. The text
is escaped as Cloudinary's text layers want it: commas and slashes twice, everything else outside
``[A-Za-z0-9_.-/:]`` once (percent-encoded UTF-8).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

DELIVERY_HOST = "https://res.cloudinary.com"
# The card: 1200x630 (what Open Graph and Twitter's large card expect), the title in white, centred,
# wrapped within 1000 px. Noto Sans JP has the glyphs of Japanese titles as well as Latin ones.
CARD_WIDTH = 1200
CARD_HEIGHT = 630
TEXT_WIDTH = 1000
FONT = "Noto Sans JP"
FONT_SIZE = 56
TEXT_COLOUR = "ffffff"
# A title longer than this is cut (with an ellipsis): the card has room for a few lines, and the URL stays
# well inside what browsers and crawlers accept.
MAX_TITLE_CHARS = 100
_SIGNATURE_CHARS = 8
_UNSAFE = re.compile(rb"[^a-zA-Z0-9_.\-/:]+")


def _escape(text: str) -> str:
    """Percent-encode every byte outside Cloudinary's safe set (its ``smart_escape``)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0)).encode(), text.encode()).decode()


def layer_text(title: str) -> str:
    """``title`` as the text of a Cloudinary text layer: ``,`` and ``/`` separate a layer's parts and
    steps, so they are escaped twice (``%252C``), as Cloudinary reads the text after decoding once."""
    once = title.replace(",", "%2C").replace("/", "%2F")
    return _escape(once)


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class CloudinaryCards:
    """The card URLs of one Cloudinary account: its cloud name, the public id of the base image and the
    API secret that signs them."""

    cloud_name: str
    base_public_id: str
    api_secret: str = field(repr=False)

    def transformation(self, title: str) -> str:
        """The transformation steps, as they appear in the URL (and are signed)."""
        font = quote(FONT, safe="")
        return "/".join(
            (
                f"c_fill,h_{CARD_HEIGHT},w_{CARD_WIDTH}",
                f"c_fit,co_rgb:{TEXT_COLOUR},l_text:{font}_{FONT_SIZE}_bold:{layer_text(_short(title))},"
                f"w_{TEXT_WIDTH}",
                "fl_layer_apply,g_center",
            )
        )

    def url(self, title: str) -> str:
        """The signed delivery URL of ``title``'s card."""
        transformation = self.transformation(title)
        public_id = _escape(unquote(self.base_public_id))
        to_sign = f"{transformation}/{public_id}"
        # SHA-1 is what Cloudinary checks short (8-character) signatures with unless the account was
        # switched to SHA-256; its SDKs sign the same way by default.
        digest = hashlib.sha1((to_sign + self.api_secret).encode()).digest()  # noqa: S324
        signature = "s--" + base64.urlsafe_b64encode(digest).decode()[:_SIGNATURE_CHARS] + "--"
        # A public id in a folder gets a version component, as Cloudinary's SDKs add it (``v1``: any
        # version serves the current image); it is not part of what is signed.
        version = "v1/" if "/" in public_id and not re.match(r"v\d+/", public_id) else ""
        cloud = quote(self.cloud_name, safe="")
        return f"{DELIVERY_HOST}/{cloud}/image/upload/{signature}/{transformation}/{version}{public_id}"
