"""Element ids in rendered articles: Zenn's heading slugs, per-article footnote ids, author ids fenced off.

* Headings: markdown-it-anchor's default slugify as zenn-markdown-html uses it (trim, lower case, each
  run of whitespace to ``-``, then ``encodeURIComponent``), duplicates numbered ``-1``, ``-2``… against
  every id handed out so far, h1-h4 only. A name front ends read (``RESERVED_IDS``: ``root``, ``app``,
  ``__next``…) counts as handed out already, so ``# root`` gets ``root-1``: no heading clobbers a
  front end's global (``window.root``) or root element, as no author id in raw HTML can.
* Footnotes: ``fn-<key>-<n>`` / ``fnref-<key>-<n>`` as markdown-it-footnote writes them with Zenn's
  ``docId``. Zenn draws the key at random; here it comes from the article's text (the stored HTML stays
  the same from one render to the next) and is redrawn until no heading id starts with ``fn-<key>-`` or
  ``fnref-<key>-``, so a heading can never take a footnote's id (four hex digits; eight when headings
  take all 65,536 of those).
* The renderer's own ids carry ``own_id_mark()`` until the sanitizer takes it off; any other id is the
  author's (raw HTML): kept only as ``user-content-<id>``, and dropped when it is a name front ends read.

Numbering and the key search are linear in the headings, and check the file's CPU budget as they go.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
import secrets
from collections.abc import Iterable
from urllib.parse import quote

from function.articles.limits import checking_every

# JavaScript's \s and String.prototype.trim: Unicode White_Space plus the BOM, no U+0085/U+180E.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACES = re.compile(f"[{_JS_SPACE}]+")
_JS_TRIM = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$")
# What encodeURIComponent leaves as it is (besides letters, digits and "-_.~", which quote keeps).
_URI_COMPONENT_SAFE = "!*'()"

HEADING_ID_LEVELS = (1, 2, 3, 4)
# Ids the front ends' own scripts look up, and globals they read that an element's id would define
# (``window.<id>``): the roots and data of Next.js, Nuxt and Gatsby, the usual React/Vue root, a config
# object. Compared in lower case. Never an author's id, never a heading's.
RESERVED_IDS = frozenset(
    {
        "__next_data__", "__next", "__nuxt", "__nuxt_data__", "__nuxt__", "___gatsby",
        "gatsby-focus-wrapper", "root", "app", "config",
    }
)  # fmt: skip
USER_ID_PREFIX = "user-content-"


def slugify(text: str) -> str:
    """markdown-it-anchor's default slugify (what Zenn uses): ``console.log()`` stays as it is, any
    character outside encodeURIComponent's unreserved set is percent-encoded (``B!?`` → ``b!%3F``)."""
    slug = _JS_SPACES.sub("-", _JS_TRIM.sub("", text).lower())
    return quote(slug, safe=_URI_COMPONENT_SAFE, errors="surrogatepass")


class Slugger:
    """markdown-it-anchor's uniqueSlug: the first ``x`` is ``x``, then ``x-1``, ``x-2``…; a reserved
    name (``RESERVED_IDS``) is taken from the start, so ``root`` is ``root-1``.

    markdown-it-anchor tries ``x-1``, ``x-2``… from 1 for every ``x``: 15,000 headings ``# a`` took
    minutes. Here the search for ``x`` resumes where the last one stopped, which gives the same ids
    (the taken set only grows, so every number before it is still taken)."""

    def __init__(self) -> None:
        self._taken: set[str] = set(RESERVED_IDS)
        self._next: dict[str, int] = {}
        self._check = checking_every(256)

    def unique(self, slug: str) -> str:
        n = self._next.get(slug, 1)
        candidate = slug if n == 1 else f"{slug}-{n - 1}"
        while candidate in self._taken:
            candidate = f"{slug}-{n}"
            n += 1
            self._check()
        self._next[slug] = n
        self._taken.add(candidate)
        return candidate


def footnote_key(text: str, heading_ids: Iterable[str]) -> str:
    """Four hex digits like Zenn's docId, from ``text``; never a prefix of a heading id (eight when
    headings take every four-digit key)."""
    taken = _footnote_keys_taken(heading_ids)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    check = checking_every(256)
    for attempt in itertools.count():
        width = _KEY_WIDTHS[0] if attempt < 1 << 16 else _KEY_WIDTHS[1]
        key = hashlib.sha256(digest + attempt.to_bytes(4, "big")).hexdigest()[:width]
        if key not in taken:
            return key
        check()
    raise AssertionError("unreachable")  # pragma: no cover


_KEY_WIDTHS = (4, 8)


def _footnote_keys_taken(heading_ids: Iterable[str]) -> set[str]:
    """The keys ``k`` (of the widths keys have) for which a heading id starts ``fn-k-`` or ``fnref-k-``."""
    taken: set[str] = set()
    for value in heading_ids:
        for prefix in ("fn-", "fnref-"):
            if value.startswith(prefix):
                rest = value[len(prefix) :]
                taken.update(rest[:w] for w in _KEY_WIDTHS if rest[w : w + 1] == "-")
    return taken


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
