"""The front matter's values, checked: strings that stay strings, one line or several, within their
length; the tags (with Zenn's topics and the legacy category) normalised and bounded. Every refusal is
an ``ArticleParseError`` that tells the author what to write instead.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from function.articles import front_matter
from function.errors import ArticleParseError

MAX_TITLE_CHARS = 500
MAX_TYPE_CHARS = 64
MAX_DESCRIPTION_CHARS = 5000
MAX_THUMBNAIL_CHARS = 2048
MAX_TAG_CHARS = 190
MAX_TAGS = 100
MAX_EMOJI_CHARS = 32


def text_field(meta: dict[Any, Any], key: str, max_chars: int, *, multiline: bool) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArticleParseError(
            f"front matter: '{key}' must be a string, not {kind_of(value)} (put it in quotes: {key}: \"...\")"
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


def tags_of(meta: dict[Any, Any]) -> tuple[str, ...]:
    raw: list[str] = []
    from_tags = from_topics = None
    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list):
            raise ArticleParseError(f"front matter: 'tags' must be a list of strings, not {kind_of(tags)}")
        from_tags = {normalise_tag(tag) for tag in _strings("tags", tags)} - {""}
        raw.extend(tags)
    topics = meta.get("topics")
    if topics is not None:
        if not isinstance(topics, list):
            raise ArticleParseError(
                f"front matter: 'topics' must be a list of strings, not {kind_of(topics)}"
            )
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
        _check_characters("tags", tag, multiline=False)
    return tuple(sorted(normalised))


def _strings(key: str, values: list[Any]) -> list[str]:
    for value in values:
        if not isinstance(value, str):
            raise ArticleParseError(
                f"front matter: '{key}' must be a list of strings, but holds {kind_of(value)}"
                " (put it in quotes)"
            )
    return values


def normalise_tag(tag: str) -> str:
    """``" /tech//aws/ "`` → ``"tech/aws"``: segments stripped, empty ones dropped ("" if none is left)."""
    return "/".join(part.strip() for part in tag.split("/") if part.strip())


def kind_of(value: object) -> str:
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
