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
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import yaml

from function.articles import front_matter, xml_chars
from function.articles.ignored import is_ignored_name
from function.articles.parsed import ParsedArticle
from function.articles.render import Rendered, is_safe_url, render_article
from function.errors import ArticleParseError, RenderLimitError

MAX_FILE_BYTES = 1024 * 1024
MAX_FRONT_MATTER_CHARS = 64 * 1024
MAX_HTML_BYTES = 4 * 1024 * 1024
MAX_SLUG_CHARS = 190
MAX_TITLE_CHARS = 500
MAX_TYPE_CHARS = 64
MAX_DESCRIPTION_CHARS = 5000
MAX_THUMBNAIL_CHARS = 2048
MAX_TAG_CHARS = 190
MAX_TAGS = 100
MAX_EMOJI_CHARS = 32
# Zenn's zone: a zone-less publication time means Japanese time unless ARTICLE_TIMEZONE says otherwise.
DEFAULT_TIMEZONE = "Asia/Tokyo"

YamlLoader = type[yaml.SafeLoader] | type[yaml.CSafeLoader]


if yaml.__with_libyaml__:

    class _CLoaderLikePure(yaml.CSafeLoader):
        """libyaml's safe loader, resolving as the pure one does where they differ."""

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            # The C parser reports an empty node tagged "!" as not implicit, so it would become ''
            # where the pure loader resolves it like a plain scalar (null). (False, False) reaches
            # resolve only for a "!" tag: untagged scalars are always plain or quoted implicit.
            if kind is yaml.ScalarNode and implicit == (False, False):
                implicit = (True, False)
            return super().resolve(kind, value, implicit)


def yaml_loaders() -> dict[str, YamlLoader]:
    """The front matter loaders this PyYAML has, fastest first: "libyaml" (when built with it), "pure"."""
    loaders: dict[str, YamlLoader] = {}
    if yaml.__with_libyaml__:
        loaders["libyaml"] = _CLoaderLikePure
    loaders["pure"] = yaml.SafeLoader
    return loaders


_FASTEST_LOADER: YamlLoader = next(iter(yaml_loaders().values()))


_COMMENT_AFTER_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*#")


def _load_yaml(source: str, loader: YamlLoader) -> Any:
    if loader is yaml.SafeLoader or "\t" in source or _COMMENT_AFTER_BLOCK_HEADER.search(source):
        # libyaml accepts what the pure scanner refuses in two places: tabs ("t\t", a tab before a
        # value) and a comment right after a block scalar header ("|#"). Front matter with either is
        # rare enough to be read the pure way only.
        return yaml.load(source, Loader=yaml.SafeLoader)
    try:
        return yaml.load(source, Loader=loader)  # noqa: S506 - one of yaml_loaders(), both safe
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
        # The two parsers word their errors differently and disagree on a few corner cases of
        # invalid YAML; reading the text again with the pure loader makes its verdict the one that
        # counts. Only invalid files pay for the second read.
        return yaml.load(source, Loader=yaml.SafeLoader)


_SLUG_RE = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]*")
_OPENING_RE = re.compile(r"---[ \t]*")
_CLOSING_RE = re.compile(r"(?:---|\.\.\.)[ \t]*")


def is_article_path(path: str, articles_dir: str = "articles") -> bool:
    """True when ``path`` is a direct child ``<articles_dir>/<name>.md``: the listing filter.

    It is the same rule the GitHub source applies to the tree listing, and it keeps files whose name is not
    a valid slug (``hello world.md``): ``parse_article`` then fails them with a message. Files that are
    not articles (``is_ignored_name``: ``README.md``, ``.hidden.md``, ``_draft.md``) are left out.
    """
    name = _name_in_dir(path, articles_dir)
    return name is not None and name.endswith(".md") and not is_ignored_name(name)


def slug_for_path(path: str, articles_dir: str = "articles") -> str | None:
    """The slug of ``<articles_dir>/<slug>.md`` when it is a direct child with a valid slug, else None
    (also for files that are not articles)."""
    if not is_article_path(path, articles_dir):
        return None
    try:
        return _slug(path, articles_dir)
    except ArticleParseError:
        return None


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
) -> ParsedArticle:
    """Parse one article file in the documented article format (``yaml_loader``: one of
    ``yaml_loaders()``, the fastest when None).

    Raises ``ArticleParseError`` (and nothing else) for any input that is not a valid article; its message
    names the problem but not the path, which the caller logs alongside. ``timezone`` is the zone of
    zone-less publication times (default Asia/Tokyo).
    """
    zone = timezone if timezone is not None else ZoneInfo(DEFAULT_TIMEZONE)
    slug = _slug(path, articles_dir)
    text, forbidden = xml_chars.without_forbidden(_decode(content))
    meta, body = _split_front_matter(text, yaml_loader or _FASTEST_LOADER)

    title = _text_field(meta, "title", MAX_TITLE_CHARS, multiline=False)
    publish = front_matter.publish_flag(meta)
    if title is None and (publish or "title" not in meta):
        raise ArticleParseError("front matter: 'title' is required and must not be empty")
    type_ = _text_field(meta, "type", MAX_TYPE_CHARS, multiline=False)
    description = _text_field(meta, "description", MAX_DESCRIPTION_CHARS, multiline=True)
    thumbnail = _text_field(meta, "thumbnail", MAX_THUMBNAIL_CHARS, multiline=False)
    if thumbnail is not None and not is_safe_url(thumbnail):
        raise ArticleParseError("front matter: 'thumbnail' uses a URL scheme that is not allowed")
    emoji = _text_field(meta, "emoji", MAX_EMOJI_CHARS, multiline=False)
    tags = _tags(meta)
    published_at = front_matter.publication_time(meta, zone)
    warnings = tuple(f"unknown front matter key {key!r} (ignored)" for key in front_matter.unknown_keys(meta))
    warnings += (xml_chars.removal_warning(forbidden),) if forbidden else ()

    markdown = _normalise_body(body)
    rendered = _render(markdown, allow_raw_html, asset_base_url)
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
        warnings=warnings + rendered.warnings,
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


def normalise_tag(tag: str) -> str:
    """``" /tech//aws/ "`` → ``"tech/aws"``: segments stripped, empty ones dropped ("" if none is left)."""
    return "/".join(part.strip() for part in tag.split("/") if part.strip())


# --- helpers -------------------------------------------------------------------------------------------


def _name_in_dir(path: str, articles_dir: str) -> str | None:
    folder = articles_dir.strip("/")
    prefix = f"{folder}/" if folder else ""
    if not path.startswith(prefix):
        return None
    name = path[len(prefix) :]
    return name if name and "/" not in name else None


def _slug(path: str, articles_dir: str) -> str:
    name = _name_in_dir(path, articles_dir)
    if name is None or not name.endswith(".md"):
        raise ArticleParseError(f"not an article path: expected {articles_dir.strip('/')}/<slug>.md")
    slug = name[: -len(".md")]
    if not slug:
        raise ArticleParseError("empty slug: the file is named '.md'")
    if len(slug) > MAX_SLUG_CHARS:
        raise ArticleParseError(f"slug is {len(slug)} characters long; at most {MAX_SLUG_CHARS} are allowed")
    if not _SLUG_RE.fullmatch(slug):
        raise ArticleParseError(
            "slug may only contain ASCII letters, digits, '-', '_', '.', '~' and must not start with '.'"
        )
    return slug


def _decode(content: bytes) -> str:
    if len(content) > MAX_FILE_BYTES:
        raise ArticleParseError(f"file is {len(content)} bytes; at most {MAX_FILE_BYTES} bytes are allowed")
    try:
        # utf-8-sig: a BOM written by some Windows editors is not part of the text.
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArticleParseError(f"file is not valid UTF-8 (byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split_front_matter(text: str, loader: YamlLoader) -> tuple[dict[Any, Any], str]:
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines) or not _OPENING_RE.fullmatch(lines[start]):
        raise ArticleParseError(
            "no front matter: the file must start with a '---' line (a title is required)"
        )
    end = next((i for i in range(start + 1, len(lines)) if _CLOSING_RE.fullmatch(lines[i])), None)
    if end is None:
        raise ArticleParseError("front matter is not closed: no '---' line after the opening one")
    source = "\n".join(lines[start + 1 : end])
    if len(source) > MAX_FRONT_MATTER_CHARS:
        raise ArticleParseError(
            f"front matter is {len(source)} characters; at most {MAX_FRONT_MATTER_CHARS} are allowed"
        )
    try:
        meta = _load_yaml(source, loader)
    except yaml.YAMLError as exc:
        raise ArticleParseError(f"front matter is not valid YAML: {_one_line(exc)}") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise these for values that match a pattern but do not exist
        # (e.g. the date 2024-13-45).
        raise ArticleParseError(f"front matter has an invalid value: {_one_line(exc)}") from None
    except RecursionError:
        raise ArticleParseError("front matter is nested too deeply") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ArticleParseError(f"front matter must be a mapping of keys to values, not {_kind(meta)}")
    return meta, "\n".join(lines[end + 1 :])


def _text_field(meta: dict[Any, Any], key: str, max_chars: int, *, multiline: bool) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArticleParseError(
            f"front matter: '{key}' must be a string, not {_kind(value)} (put it in quotes: {key}: \"...\")"
        )
    value = value.strip()
    if not value:
        return None
    if len(value) > max_chars:
        raise ArticleParseError(
            f"front matter: '{key}' is {len(value)} characters long; at most {max_chars} are allowed"
        )
    _check_characters(key, value, multiline=multiline)
    return value


def _check_characters(key: str, value: str, *, multiline: bool) -> None:
    allowed = "\n\t" if multiline else ""
    for char in value:
        category = unicodedata.category(char)
        if category == "Cs":
            raise ArticleParseError(f"front matter: '{key}' contains an invalid character (a lone surrogate)")
        if (category == "Cc" and char not in allowed) or char in "\ufffe\uffff":
            what = "a line break" if char == "\n" else f"the control character U+{ord(char):04X}"
            raise ArticleParseError(f"front matter: '{key}' contains {what}")


def _tags(meta: dict[Any, Any]) -> tuple[str, ...]:
    raw: list[str] = []
    from_tags = from_topics = None
    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list):
            raise ArticleParseError(f"front matter: 'tags' must be a list of strings, not {_kind(tags)}")
        from_tags = {normalise_tag(tag) for tag in _strings("tags", tags)} - {""}
        raw.extend(tags)
    topics = meta.get("topics")
    if topics is not None:
        if not isinstance(topics, list):
            raise ArticleParseError(f"front matter: 'topics' must be a list of strings, not {_kind(topics)}")
        from_topics = {front_matter.topic_tag(topic) for topic in _strings("topics", topics)} - {""}
        raw.extend(from_topics)
    front_matter.check_topics_agree(from_tags, from_topics)
    category = meta.get("category")
    if isinstance(category, str):
        raw.append(category)
    elif isinstance(category, list):
        raw.extend(_strings("category", category))
    elif category is not None:
        raise ArticleParseError(
            f"front matter: 'category' must be a string or a list of strings, not {_kind(category)}"
        )
    normalised = {normalise_tag(tag) for tag in raw}
    normalised.discard("")
    if len(normalised) > MAX_TAGS:
        raise ArticleParseError(f"front matter: {len(normalised)} tags; at most {MAX_TAGS} are allowed")
    for tag in normalised:
        if len(tag) > MAX_TAG_CHARS:
            raise ArticleParseError(
                f"front matter: a tag is {len(tag)} characters long; at most {MAX_TAG_CHARS} are allowed"
            )
        _check_characters("tags", tag, multiline=False)
    return tuple(sorted(normalised))


def _strings(key: str, values: list[Any]) -> list[str]:
    for value in values:
        if not isinstance(value, str):
            raise ArticleParseError(
                f"front matter: '{key}' must be a list of strings, but holds {_kind(value)}"
                " (put it in quotes)"
            )
    return values


def _normalise_body(body: str) -> str:
    lines = body.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()


def _render(markdown: str, allow_raw_html: bool, asset_base_url: str | None) -> Rendered:
    try:
        rendered = render_article(markdown, allow_raw_html=allow_raw_html, asset_base_url=asset_base_url)
    except RenderLimitError as exc:
        raise ArticleParseError(str(exc)) from None
    except RecursionError:
        raise ArticleParseError("Markdown body is nested too deeply to render") from None
    size = len(rendered.html.encode("utf-8", "surrogatepass"))
    if size > MAX_HTML_BYTES:
        raise ArticleParseError(f"rendered HTML is {size} bytes; at most {MAX_HTML_BYTES} are allowed")
    return rendered


def _kind(value: object) -> str:
    """How a YAML value reads to an author: "a number (2024)", "a date (2024-01-01)", "a list"..."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    name = type(value).__name__
    if name in ("date", "datetime"):
        return f"a date ({value})"
    return f"a {name} value"


def _one_line(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    return message if len(message) <= 300 else message[:297] + "..."
