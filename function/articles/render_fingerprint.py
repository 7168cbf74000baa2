"""What a stored article, chapter or book was rendered with, as one short string kept beside it.

The HTML blog-api stores depends on more than the Markdown: on this code's own rendering (``RENDER_VERSION``,
raised by hand when a change to it changes its output), on two settings (raw HTML allowed, and whether
repository images are left to ``ARTICLE_ASSET_BASE_URL`` rather than copied to the asset store) and on the
libraries that render, highlight and sanitize (their versions are pinned, but an upgrade of a pin changes
the output too). No URL is among them: image URLs are composed when an answer is served
(``function.articles.images``), so a new ``ASSET_URL`` or asset base renders nothing again. The fingerprint
is a short hash of all of it; a sync re-renders the files whose stored fingerprint is not the running
code's, so an upgrade needs no ``sync --rebuild``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib.metadata import PackageNotFoundError, version

# Raise it when a change to function/articles/ changes the HTML of an article that did not change: the
# next sync of every blog then renders its articles, chapters and books again (and nothing else).
RENDER_VERSION = 1

# The libraries whose output is stored: a new version of any of them re-renders.
RENDER_LIBRARIES = (
    "Pygments",
    "markdown-it-py",
    "mdit-py-plugins",
    "mdurl",
    "linkify-it-py",
    "nh3",
    "latex2mathml",
)


@functools.cache
def render_fingerprint(
    *, allow_raw_html: bool, images_elsewhere: bool, render_version: int = RENDER_VERSION
) -> str:
    """16 hexadecimal digits that change with the render version, the two settings, or a library's
    installed version (the same inputs always give the same string)."""
    inputs = {
        "render_version": render_version,
        "allow_raw_html": allow_raw_html,
        # Named as when the base URL itself was an input, and "" as it was then for images in the asset
        # store: the rows stored that way are still current (a migration step brought their HTML to the
        # stored references). Left to ARTICLE_ASSET_BASE_URL, the HTML keeps repository paths instead.
        "asset_base_url": "elsewhere" if images_elsewhere else "",
        "libraries": {name: _installed(name) for name in RENDER_LIBRARIES},
    }
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:  # not installed: whatever renders without it is what was stored
        return ""
