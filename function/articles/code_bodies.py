"""Highlighted code kept out of the sanitizer, and put back as the sanitizer would have written it.

A code block's body is our own markup: text escaped by ``escapeHtml`` and ``<span class="…">`` with
Pygments' class names, nothing the sanitizer removes. On a real-shaped article the bodies are most of the
page (about 85 % of its bytes) and nearly all of its attributes, each of which the sanitizer hands to
Python's attribute filter, so re-reading them was most of the sanitizer's time.

Only when the page holds no author HTML (raw HTML off): then markdown-it's markup is well formed and
nothing can move a code block elsewhere in the tree, so a body parsed by the sanitizer is the same
elements and text as the body itself. It is then written back as html5ever serialises text: ``&``,
``<``, ``>`` and U+00A0 escaped (``&nbsp;``), ``"`` as it is. A body holding anything else than the
expected markup and plain characters (controls, surrogates, noncharacters the parser might report or
change) simply stays in the page and goes through the sanitizer as before.
"""

from __future__ import annotations

import re
import secrets

# Characters a body's text may hold as they are: not markup, no control but tab and newline, no
# surrogate, no noncharacter (U+FDD0-U+FDEF and the last two code points of every plane).
_NONCHARACTERS = "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17))
_PLAIN = f'[^<>&"\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef{_NONCHARACTERS}]'
_BODY = re.compile(rf'(?:{_PLAIN}++|&(?:amp|lt|gt|quot);|<span class="[A-Za-z0-9_ -]+">|</span>)*+')

# Any render's marker: the nonce is compared in Python, so that no pattern is compiled per render.
_MARKER = re.compile("\ue002([0-9a-f]{16}):(\\d+)\ue003")


class CodeBodies:
    """The code bodies of one render, each in the page as a marker until the page is sanitized.

    The marker is private-use characters around a per-render secret, which an author cannot write."""

    def __init__(self) -> None:
        self._nonce = secrets.token_hex(8)
        self._bodies: list[str] = []

    def keep_out(self, body: str) -> str:
        """A marker for ``body`` (as the sanitizer will write it), or ``body`` itself if it is not plain."""
        if not _BODY.fullmatch(body):
            return body
        self._bodies.append(body.replace("&quot;", '"').replace("\u00a0", "&nbsp;"))
        return f"\ue002{self._nonce}:{len(self._bodies) - 1}\ue003"

    def put_in(self, html: str) -> str:
        if not self._bodies:
            return html
        return _MARKER.sub(self._body_of, html)

    def _body_of(self, marker: re.Match[str]) -> str:
        return self._bodies[int(marker[2])] if marker[1] == self._nonce else marker[0]
