"""The front matter's values, checked: strings that stay strings, one line or several, within their
length; the tags (with Zenn's topics and the legacy category) normalised and bounded. Every refusal is
an ``ArticleParseError`` that tells the author what to write instead.

One character check for every text field of every format (article, chapter, book config): characters
XML 1.0 forbids (C0 controls, lone surrogates, U+FFFE, U+FFFF), which a YAML escape such as
``"\ufffe"`` can put in a value, are removed with a warning, as in the body; then a one-line field holding
a line break, a tab or another control character is refused.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from function.articles import front_matter, xml_chars
from function.articles.front_matter import kind_of as kind_of
from function.errors import ArticleParseError

MAX_TITLE_CHARS = 500
MAX_TYPE_CHARS = 64
MAX_DESCRIPTION_CHARS = 5000
MAX_THUMBNAIL_CHARS = 2048
MAX_TAG_CHARS = 190
MAX_TAGS = 100
MAX_EMOJI_CHARS = 32


def text_field(
    meta: dict[Any, Any],
    key: str,
    max_chars: int,
    *,
    multiline: bool,
    warnings: list[str],
    where: str = "front matter",
) -> str | None:
    """``meta[key]`` as checked text (None when absent, null or blank); what was removed from it is
    told in ``warnings``."""
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArticleParseError(
            f"{where}: '{key}' must be a string, not {kind_of(value)} (put it in quotes: {key}: \"...\")"
        )
    value = checked_text(key, value, multiline=multiline, warnings=warnings, where=where).strip()
    if not value:
        return None
    if len(value) > max_chars:
        raise ArticleParseError(
            f"{where}: '{key}' is {len(value)} characters long; at most {max_chars} are allowed"
        )
    return value


def checked_text(
    key: str, value: str, *, multiline: bool, warnings: list[str], where: str = "front matter"
) -> str:
    """``value`` without the characters XML 1.0 forbids (a warning says so); ``ArticleParseError`` for a
    line break, tab or other control character in a one-line value (or a control character other than a
    line break or tab in a multi-line one)."""
    value, removed = xml_chars.without_forbidden(value)
    if removed:
        warnings.append(
            f"{where}: removed {removed} character(s) that XML 1.0 forbids from '{key}' (control characters,"
            " lone surrogates, U+FFFE, U+FFFF; a form feed or vertical tab became a space)"
        )
    _check_characters(key, value, multiline=multiline, where=where)
    return value


def _check_characters(key: str, value: str, *, multiline: bool, where: str) -> None:
    allowed = "\n\t" if multiline else ""
    for char in value:
        if unicodedata.category(char) == "Cc" and char not in allowed:
            what = "a line break" if char in "\n\r" else f"the control character U+{ord(char):04X}"
            raise ArticleParseError(f"{where}: '{key}' contains {what}")


def tags_of(meta: dict[Any, Any], warnings: list[str]) -> tuple[str, ...]:
    raw: list[str] = []
    from_tags = from_topics = None
    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list):
            raise ArticleParseError(f"front matter: 'tags' must be a list of strings, not {kind_of(tags)}")
        tags = _strings("tags", tags, warnings)
        from_tags = {normalise_tag(tag) for tag in tags} - {""}
        raw.extend(tags)
    topics = meta.get("topics")
    if topics is not None:
        if not isinstance(topics, list):
            raise ArticleParseError(
                f"front matter: 'topics' must be a list of strings, not {kind_of(topics)}"
            )
        from_topics = {front_matter.topic_tag(topic) for topic in _strings("topics", topics, warnings)} - {""}
        raw.extend(from_topics)
    front_matter.check_topics_agree(from_tags, from_topics)
    category = meta.get("category")
    if isinstance(category, str):
        raw.extend(_strings("category", [category], warnings))
    elif isinstance(category, list):
        raw.extend(_strings("category", category, warnings))
    elif category is not None:
        raise ArticleParseError(
            f"front matter: 'category' must be a string or a list of strings, not {kind_of(category)}"
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
        _check_characters("tags", tag, multiline=False, where="front matter")
    return tuple(sorted(normalised))


def _strings(key: str, values: list[Any], warnings: list[str]) -> list[str]:
    """``values``, each a string, with the characters XML forbids removed (one warning for the key)."""
    for value in values:
        if not isinstance(value, str):
            raise ArticleParseError(
                f"front matter: '{key}' must be a list of strings, but holds {kind_of(value)}"
                " (put it in quotes)"
            )
    cleaned = [xml_chars.without_forbidden(value)[0] for value in values]
    if cleaned != values:
        warnings.append(
            f"front matter: removed characters that XML 1.0 forbids from '{key}' (control characters,"
            " lone surrogates, U+FFFE, U+FFFF; a form feed or vertical tab became a space)"
        )
    return cleaned


def normalise_tag(tag: str) -> str:
    """``" /tech//aws/ "`` → ``"tech/aws"``: segments stripped, empty ones dropped ("" if none is left)."""
    return "/".join(part.strip() for part in tag.split("/") if part.strip())
