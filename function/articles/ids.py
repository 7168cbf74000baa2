"""Element ids in rendered articles: Zenn's heading slugs, per-article footnote ids, author ids fenced off.

* Headings: markdown-it-anchor's default slugify as zenn-markdown-html uses it (trim, lower case, each
  run of whitespace to ``-``, then ``encodeURIComponent``), duplicates numbered ``-1``, ``-2``… against
  every id handed out so far, h1-h4 only.
* Footnotes: ``fn-<key>-<n>`` / ``fnref-<key>-<n>`` as markdown-it-footnote writes them with Zenn's
  ``docId``. Zenn draws the key at random; here it comes from the article's text (the stored HTML stays
  the same from one render to the next) and is redrawn until no heading id starts with ``fn-<key>-`` or
  ``fnref-<key>-``, so a heading can never take a footnote's id.
* The renderer's own ids carry ``own_id_mark()`` until the sanitizer takes it off; any other id is the
  author's (raw HTML): kept only as ``user-content-<id>``, and dropped when it is a name front ends read.
"""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
from collections.abc import Iterable
from urllib.parse import quote

# JavaScript's \s and String.prototype.trim: Unicode White_Space plus the BOM, no U+0085/U+180E.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACES = re.compile(f"[{_JS_SPACE}]+")
_JS_TRIM = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$")
# What encodeURIComponent leaves as it is (besides letters, digits and "-_.~", which quote keeps).
_URI_COMPONENT_SAFE = "!*'()"

HEADING_ID_LEVELS = (1, 2, 3, 4)
# Ids the front ends' own scripts look up (Next.js, Nuxt, React/Vue roots): never an author's.
RESERVED_IDS = frozenset({"__next_data__", "__next", "__nuxt", "root", "app"})
USER_ID_PREFIX = "user-content-"


def slugify(text: str) -> str:
    """markdown-it-anchor's default slugify (what Zenn uses): ``console.log()`` stays as it is, any
    character outside encodeURIComponent's unreserved set is percent-encoded (``B!?`` → ``b!%3F``)."""
    slug = _JS_SPACES.sub("-", _JS_TRIM.sub("", text).lower())
    return quote(slug, safe=_URI_COMPONENT_SAFE, errors="surrogatepass")


class Slugger:
    """markdown-it-anchor's uniqueSlug: the first ``x`` is ``x``, then ``x-1``, ``x-2``…"""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def unique(self, slug: str) -> str:
        candidate, n = slug, 1
        while candidate in self._taken:
            candidate = f"{slug}-{n}"
            n += 1
        self._taken.add(candidate)
        return candidate


def footnote_key(text: str, heading_ids: Iterable[str]) -> str:
    """Four hex digits like Zenn's docId, from ``text``; never a prefix of a heading id."""
    ids = tuple(heading_ids)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    for attempt in range(1 << 16):
        key = hashlib.sha256(digest + attempt.to_bytes(4, "big")).hexdigest()[:4]
        if not any(i.startswith((f"fn-{key}-", f"fnref-{key}-")) for i in ids):
            return key
    raise AssertionError("unreachable: fewer than 65536 headings take every key")  # pragma: no cover


@functools.cache
def own_id_mark() -> str:
    """A prefix only this process knows (private-use characters around a secret): an author cannot write
    it, so an id that carries it was made by the renderer."""
    return f"\ue000{secrets.token_hex(8)}\ue001"


def own_id(value: str) -> str:
    return own_id_mark() + value


def sanitized_id(value: str) -> str | None:
    """The id the page gets: the renderer's own as made, an author's prefixed (None: dropped)."""
    mark = own_id_mark()
    if value.startswith(mark):
        return value[len(mark) :]
    value = value.strip()
    if not value or value.lower() in RESERVED_IDS:
        return None
    return USER_ID_PREFIX + value
