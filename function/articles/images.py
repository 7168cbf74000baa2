"""Repository images in the stored HTML: the renderer's own references, kept as ``asset:<key>`` and made
into URLs only when an answer is served.

Rendering (``ImageReferences``): each Markdown image's source is offered to a resolver (the asset
store's, ``function.assets``), which may answer the stored reference of its copy. Through the sanitizer
the reference travels as a marker holding a per-render secret, which an author cannot write;
``seal`` then puts the reference where a marker is still the whole ``src`` of an ``<img>``, removes every
other marker (one that raw HTML swallowed into an attribute), and drops any ``src="asset:…"`` the
renderer did not write (the sanitizer's URL schemes drop it already; this does not depend on them).

Serving (``compose``): a reference becomes ``<ASSET_URL>/<key>``, and with ``ARTICLE_ASSET_BASE_URL``
set a repository path (``/images/…``, ``images/…``) becomes ``<that base>/images/…``, from the settings
of the moment: a change of either changes every answer at once, with no sync. An answer without HTML
(a list of summaries) never needs it.

Both read the sanitizer's output token by token from its start: a tag's attributes are written
``name="value"`` with no ``"`` inside a value, and text never holds a ``<``; so an ``<img>`` found here is
an element a browser builds, never text or the inside of another attribute. (The one exception is an
iframe's fallback text, written as it is: a browser never shows it, and what is put there, a reference
or an escaped base before a key, cannot end it.)
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

# src as written → the stored reference of its copy (``stored_reference``), or None to leave it.
ImageResolver = Callable[[str], str | None]

REFERENCE_SCHEME = "asset:"
# A content key (``function.assets.keys``): the sha256 of the bytes, then the type's extension.
_KEY = re.compile(r"[0-9a-f]{64}\.[a-z0-9]{1,8}")
_TAG = r'<(?:[^>"]|"[^"]*")*>'
# Every run of text and tags that holds no <img> is one match (group 1), found in C; only an <img> start
# tag (or a '<' that starts no tag) reaches Python. Possessive, so a long run keeps no backtracking state.
_TOKENS = re.compile(rf"((?:[^<]+|(?!<img[\s/>]){_TAG})++)|{_TAG}|<")
# In an <img> start tag: its src, with every attribute before it taken whole (so never inside a value).
_SRC = re.compile(r'(<img(?:\s[^\s"=/>]+="[^"]*")*?\ssrc=")([^"]*)"')
# What ARTICLE_ASSET_BASE_URL is put before: a repository image as the author wrote its path.
_REPOSITORY_IMAGE = re.compile(r"/?images/")


def stored_reference(key: str) -> str:
    """What the stored HTML (and a book's ``cover_url``) holds for the asset store's image ``key``."""
    if _KEY.fullmatch(key) is None:
        raise ValueError(f"not an asset key: {key!r}")
    return REFERENCE_SCHEME + key


def key_of(reference: str) -> str | None:
    """The key of a stored reference, or None for any other value."""
    if not reference.startswith(REFERENCE_SCHEME):
        return None
    key = reference[len(REFERENCE_SCHEME) :]
    return key if _KEY.fullmatch(key) else None


# A marker of any render: its nonce is compared in Python, so that no pattern is compiled per render
# (a compile costs a quarter of a millisecond, as much as a tenth of a short article's render).
_MARKER = re.compile("\ue000([0-9a-f]{16}):(\\d+)\ue001")


class ImageReferences:
    """One render's image references, kept out of the page until it is sanitized (see the module)."""

    def __init__(self) -> None:
        self._nonce = secrets.token_hex(8)
        self._references: list[str] = []

    def resolve_sources(self, tokens: Sequence[Token], resolve: ImageResolver) -> None:
        """Offer every image token's ``src`` (inline children, as markdown-it nests them) to ``resolve``;
        an answered reference replaces it as a marker."""
        for token in tokens:
            for child in token.children or ():
                if child.type == "image":
                    src = child.attrGet("src")
                    if isinstance(src, str) and (reference := resolve(src)) is not None:
                        child.attrSet("src", self._marked(reference))

    def _marked(self, reference: str) -> str:
        if key_of(reference) is None:
            raise ValueError(f"an image resolver answered {reference!r}, not a stored reference")
        self._references.append(reference)
        return f"\ue000{self._nonce}:{len(self._references) - 1}\ue001"

    def seal(self, html: str) -> str:
        """``html`` (the sanitizer's output) with this render's references in place and no other."""
        if REFERENCE_SCHEME not in html and not self._references:
            return html

        def seal_src(src: str) -> str | None:
            marker = _MARKER.fullmatch(src)
            if marker is not None and marker[1] == self._nonce:
                return self._references[int(marker[2])]
            return None if src.startswith(REFERENCE_SCHEME) else src

        html = _rewrite_sources(html, seal_src)
        return _MARKER.sub(self._unless_ours, html) if self._references else html

    def _unless_ours(self, marker: re.Match[str]) -> str:
        return "" if marker[1] == self._nonce else marker[0]


@dataclass(frozen=True)
class ImageBases:
    """Where served images are: the asset store's URL (``ASSET_URL``: ``/assets`` on the app by default,
    the asset domain on AWS) and, when set, ``ARTICLE_ASSET_BASE_URL`` for repository paths."""

    stored: str
    repository: str | None = None

    def absolute(self, site_url: str) -> ImageBases:
        """The same with a root-relative asset URL made absolute against ``site_url`` (the feed's)."""
        if self.stored.startswith("/"):
            return ImageBases(site_url.rstrip("/") + self.stored, self.repository)
        return self


def compose(html: str, bases: ImageBases) -> str:
    """Stored HTML as readers get it: each reference, and each repository image when
    ``bases.repository`` is set, made a URL (attribute boundaries kept: the bases are escaped)."""
    references = REFERENCE_SCHEME in html
    repository = bases.repository is not None and "images/" in html
    if not references and not repository:
        return html
    stored = escape(bases.stored.rstrip("/"))
    elsewhere = escape(bases.repository.rstrip("/")) if bases.repository is not None else None

    def url_of(src: str) -> str:
        key = key_of(src)
        if key is not None:
            return f"{stored}/{key}"
        if elsewhere is not None and _REPOSITORY_IMAGE.match(src):
            return f"{elsewhere}/{src.lstrip('/')}"
        return src

    return _rewrite_sources(html, url_of)


def compose_url(value: str | None, bases: ImageBases) -> str | None:
    """A stored reference outside HTML (a book's cover) as its URL; any other value as it is."""
    if value is None:
        return None
    key = key_of(value)
    return f"{bases.stored.rstrip('/')}/{key}" if key is not None else value


def _rewrite_sources(html: str, rewrite: Callable[[str], str | None]) -> str:
    """``html`` with each ``<img>``'s ``src`` value (as written, attribute-escaped) passed through
    ``rewrite``: its answer replaces the value, None removes the attribute."""

    def one(match: re.Match[str]) -> str:
        token = match[0]
        if match[1] is not None:
            return token
        src = _SRC.match(token)
        if src is None:
            return token
        value = rewrite(src[2])
        if value == src[2]:
            return token
        if value is None:
            return src[1][: -len(' src="')] + token[src.end() :]
        return f"{src[1]}{value}{token[src.end() - 1 :]}"

    return _TOKENS.sub(one, html)


# An earlier version's stored image: the asset URL of that time (any base), then the key.
_URL_OF_KEY = re.compile(r"[^?#]*/([0-9a-f]{64}\.[a-z0-9]{1,8})")


def reference_for_url(url: str, keys: Container[str]) -> str | None:
    """The stored reference of ``url`` when it is the URL an earlier version stored for one of ``keys``
    (``<its ASSET_URL>/<key>``), else None."""
    match = _URL_OF_KEY.fullmatch(url)
    return stored_reference(match[1]) if match is not None and match[1] in keys else None


def references_for_urls(html: str, keys: Container[str]) -> str:
    """HTML an earlier version stored, with each ``<img>`` that shows one of ``keys`` through the asset
    URL of that time holding its reference instead: what the renderer stores now."""
    if "<img" not in html:
        return html
    return _rewrite_sources(html, lambda src: reference_for_url(src, keys) or src)
