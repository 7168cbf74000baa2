"""One article file → ``ParsedArticle``, or ``ArticleParseError`` saying what is wrong.

Decisions where the contract is silent:

* Article paths are direct children ``<articles_dir>/<name>.md`` (``is_article_path``); both sources list
  exactly these. Whether the name makes a valid slug is a separate question (``slug_for_path``).
* A slug (file name without ``.md``) is 1-190 characters from RFC 3986's unreserved set
  ``A-Z a-z 0-9 - _ . ~``, not starting with ``.``. These never need percent-encoding in a URL path
  segment; 190 fits a utf8mb4 index. Non-ASCII names are refused rather than guessed at (NFC vs NFD file
  names would otherwise give two slugs that look the same). Case is kept.
* The file must be UTF-8 (a BOM is allowed) and at most ``MAX_FILE_BYTES`` (1 MiB: ~20x a long article,
  and a row of content plus HTML stays well inside TiDB's 6 MB entry limit). It must start with a
  ``---`` line (blank lines before it are allowed) and the front matter must end with ``---`` or ``...``.
* Front matter is read with YAML's safe loader and must be a mapping. Unknown keys are warnings
  (``ParsedArticle.warnings``), never failures; Zenn's aliases, ``emoji`` and the publication time are
  read by ``function.articles.front_matter``. The C loader (libyaml, ~10x faster) is used when PyYAML has
  it, made to give the pure loader's results: an empty node tagged ``!`` is null as in the pure loader;
  text with a tab or a ``|#`` is read by the pure loader; on any error the pure loader reads the text
  again, so what is refused and the message saying why are the pure loader's (``yaml_loaders``).
* Strings are never coerced: ``title: 2024`` or ``title: 2024-01-01`` is an error telling the author to
  quote it, because YAML would already have changed the text (``1.10`` → ``1.1``).
* ``title`` is required: stripped, non-empty (only a draft may leave it empty, as ``zenn new:article``
  writes it: ``title: ""``, stored as ""), one line, at most 500 characters. ``type``, ``description``,
  ``thumbnail`` are optional strings (absent, null or blank → None); ``thumbnail`` must not use a
  script-capable URL scheme (the same check as links in the body).
* ``emoji`` is an optional string like ``type`` (one line, at most 32 characters: a few code points).
* ``publish`` (or ``published``) must be a YAML boolean (``true``/``false``, also YAML 1.1's
  ``yes``/``no``); null or absent → False.
* ``tags`` (or ``topics``, each topic one level) must be a list of strings (null → none); ``category``
  may be a string or a list of strings and is merged into the tags. Each tag is normalised: segments
  split on ``/``, each stripped, empty segments dropped (so ``" /tech//aws/ "`` → ``"tech/aws"``);
  empty tags dropped; unique; sorted. Case is kept.
* ``content`` is the body after the front matter with line endings normalised to ``\\n``, leading blank
  lines and trailing whitespace removed.
* Characters XML 1.0 forbids are removed with a warning, from the text and from every field (``xml_chars``,
  ``front_matter_fields.checked_text``): the article is kept.
* Whatever goes wrong while the file is read is an ``ArticleParseError`` in words, within the file's CPU
  budget (``one_file``).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from function.articles import front_matter, xml_chars
from function.articles.article_paths import MAX_SLUG_CHARS as MAX_SLUG_CHARS
from function.articles.article_paths import is_article_path as is_article_path
from function.articles.article_paths import slug_for_path as slug_for_path
from function.articles.article_paths import slug_of as _slug
from function.articles.front_matter_fields import (
    MAX_DESCRIPTION_CHARS,
    MAX_EMOJI_CHARS,
    MAX_THUMBNAIL_CHARS,
    MAX_TITLE_CHARS,
    MAX_TYPE_CHARS,
)
from function.articles.front_matter_fields import MAX_TAG_CHARS as MAX_TAG_CHARS
from function.articles.front_matter_fields import MAX_TAGS as MAX_TAGS
from function.articles.front_matter_fields import normalise_tag as normalise_tag
from function.articles.front_matter_fields import tags_of as _tags
from function.articles.front_matter_fields import text_field as _text_field
from function.articles.front_matter_yaml import FASTEST_LOADER as _FASTEST_LOADER
from function.articles.front_matter_yaml import MAX_FRONT_MATTER_CHARS as MAX_FRONT_MATTER_CHARS
from function.articles.front_matter_yaml import YamlLoader as YamlLoader
from function.articles.front_matter_yaml import split_front_matter as _split_front_matter
from function.articles.front_matter_yaml import yaml_loaders as yaml_loaders
from function.articles.images import ImageResolver
from function.articles.one_file import reading_one_file
from function.articles.parsed import ParsedArticle
from function.articles.render import Rendered, is_safe_url, render_article
from function.articles.row_size import check_row_size
from function.errors import ArticleParseError, RenderLimitError
from shared.names import RESERVED_ARTICLE_SLUGS

MAX_FILE_BYTES = 1024 * 1024
MAX_HTML_BYTES = 4 * 1024 * 1024
# Zenn's zone: a zone-less publication time means Japanese time unless ARTICLE_TIMEZONE says otherwise.
DEFAULT_TIMEZONE = "Asia/Tokyo"


def parse_article(
    path: str,
    blob_sha: str,
    content: bytes,
    *,
    articles_dir: str = "articles",
    allow_raw_html: bool = False,
    timezone: tzinfo | None = None,
    yaml_loader: YamlLoader | None = None,
    asset_base_url: str | None = None,
    resolve_image: ImageResolver | None = None,
) -> ParsedArticle:
    """Parse one article file in the documented article format (``yaml_loader``: one of
    ``yaml_loaders()``, the fastest when None).

    Raises ``ArticleParseError`` (and nothing else but a dependency's failure, ``SYNC_FAILURES``, from
    ``resolve_image``) for any input that is not a valid article; its message names the problem but not
    the path, which the caller logs alongside. ``timezone`` is the zone of zone-less publication times
    (default Asia/Tokyo).
    """
    with reading_one_file("article"):
        return _parse_article(
            path,
            blob_sha,
            content,
            articles_dir=articles_dir,
            allow_raw_html=allow_raw_html,
            zone=timezone if timezone is not None else ZoneInfo(DEFAULT_TIMEZONE),
            yaml_loader=yaml_loader or _FASTEST_LOADER,
            asset_base_url=asset_base_url,
            resolve_image=resolve_image,
        )


def _parse_article(
    path: str,
    blob_sha: str,
    content: bytes,
    *,
    articles_dir: str,
    allow_raw_html: bool,
    zone: tzinfo,
    yaml_loader: YamlLoader,
    asset_base_url: str | None,
    resolve_image: ImageResolver | None,
) -> ParsedArticle:
    slug = _slug(path, articles_dir)
    warnings: list[str] = []
    if slug in RESERVED_ARTICLE_SLUGS:
        # Synced and kept, but its address is a route's: the route answers there, not the article.
        warnings.append(
            f"the slug {slug!r} is also the name of a read route (/users/<name>/articles/{slug}), "
            "which wins: this article is not served at its own address; rename the file to serve it"
        )
    text = read_text(content, warnings)
    meta, body = _split_front_matter(text, yaml_loader)

    title = _text_field(meta, "title", MAX_TITLE_CHARS, multiline=False, warnings=warnings)
    publish = front_matter.publish_flag(meta)
    if title is None and (publish or "title" not in meta):
        raise ArticleParseError("front matter: 'title' is required and must not be empty")
    type_ = _text_field(meta, "type", MAX_TYPE_CHARS, multiline=False, warnings=warnings)
    description = _text_field(meta, "description", MAX_DESCRIPTION_CHARS, multiline=True, warnings=warnings)
    thumbnail = _text_field(meta, "thumbnail", MAX_THUMBNAIL_CHARS, multiline=False, warnings=warnings)
    if thumbnail is not None and not is_safe_url(thumbnail):
        raise ArticleParseError("front matter: 'thumbnail' uses a URL scheme that is not allowed")
    emoji = _text_field(meta, "emoji", MAX_EMOJI_CHARS, multiline=False, warnings=warnings)
    tags = _tags(meta, warnings)
    published_at = front_matter.publication_time(meta, zone)
    warnings[:0] = front_matter.unknown_key_warnings(meta, front_matter.KNOWN_KEYS, "front matter")

    markdown = _normalise_body(body)
    rendered = _render(markdown, allow_raw_html, asset_base_url, resolve_image)
    others = (title, type_, description, thumbnail, emoji, path, slug, blob_sha)
    check_row_size("article", markdown, rendered.html, rendered.toc, others)
    return ParsedArticle(
        slug=slug,
        path=path,
        blob_sha=blob_sha,
        title=title or "",
        type=type_,
        description=description,
        thumbnail=thumbnail,
        publish=publish,
        tags=tags,
        content=markdown,
        content_html=rendered.html,
        toc=rendered.toc,
        content_hash=content_hash(
            title=title or "",
            type=type_,
            description=description,
            thumbnail=thumbnail,
            publish=publish,
            tags=tags,
            content=markdown,
            emoji=emoji,
            published_at=published_at,
        ),
        emoji=emoji,
        published_at=published_at,
        slug_date=front_matter.slug_date(slug, zone),
        warnings=tuple(warnings) + rendered.warnings,
    )


def content_hash(
    *,
    title: str,
    type: str | None,
    description: str | None,
    thumbnail: str | None,
    publish: bool,
    tags: tuple[str, ...],
    content: str,
    emoji: str | None = None,
    published_at: datetime | None = None,
) -> str:
    """sha256 hex of a canonical JSON of the fields that make an article's content and metadata.

    Equal inputs always give equal hashes (sorted keys, fixed separators, UTF-8), so the store can move
    ``updatedAt`` only on a real change. Path, blob SHA and the rendered HTML are left out on purpose: a
    file that moves bytes without changing meaning (CRLF → LF), or a renderer upgrade, is not an edit.
    ``emoji`` and ``published_at`` enter only when given, so an article without them hashes as it did
    before they existed (and no stored article looks edited after an upgrade).
    """
    fields: dict[str, Any] = {
        "v": 1,
        "title": title,
        "type": type,
        "description": description,
        "thumbnail": thumbnail,
        "publish": publish,
        "tags": list(tags),
        "content": content,
    }
    if emoji is not None:
        fields["emoji"] = emoji
    if published_at is not None:
        fields["published_at"] = published_at.isoformat()
    canonical = json.dumps(
        fields,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    # surrogatepass: never fail on a lone surrogate (validated strings have none; this is belt and braces).
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def read_text(content: bytes, warnings: list[str]) -> str:
    """The file's text (``_decode``) without the characters XML 1.0 forbids; a warning says how many."""
    text, forbidden = xml_chars.without_forbidden(_decode(content))
    if forbidden:
        warnings.append(xml_chars.removal_warning(forbidden))
    return text


def _decode(content: bytes) -> str:
    if len(content) > MAX_FILE_BYTES:
        raise ArticleParseError(f"file is {len(content)} bytes; at most {MAX_FILE_BYTES} bytes are allowed")
    try:
        # utf-8-sig: a BOM written by some Windows editors is not part of the text.
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArticleParseError(f"file is not valid UTF-8 (byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _normalise_body(body: str) -> str:
    # Leading blank lines go, found in one pass (a million of them once cost minutes, line by line).
    lines = body.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n".join(lines[first:]).rstrip()


def _render(
    markdown: str,
    allow_raw_html: bool,
    asset_base_url: str | None,
    resolve_image: ImageResolver | None = None,
) -> Rendered:
    try:
        rendered = render_article(
            markdown,
            allow_raw_html=allow_raw_html,
            asset_base_url=asset_base_url,
            resolve_image=resolve_image,
        )
    except RenderLimitError as exc:
        raise ArticleParseError(str(exc)) from None
    except RecursionError:
        raise ArticleParseError("Markdown body is nested too deeply to render") from None
    size = len(rendered.html.encode("utf-8", "surrogatepass"))
    if size > MAX_HTML_BYTES:
        raise ArticleParseError(f"rendered HTML is {size} bytes; at most {MAX_HTML_BYTES} are allowed")
    return rendered
