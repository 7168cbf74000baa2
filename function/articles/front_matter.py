"""What an article's front matter says: its keys, Zenn's aliases for them, and its publication time.

Zenn (and other static-blog formats) name some keys differently; each alias reads like its key:

* ``published`` is ``publish``; ``topics`` is ``tags`` (each topic one tag of one level: a ``/`` in a topic
  is refused rather than read as a path); ``published_at`` and ``date`` set the publication time.
* When a key and its alias are both present they must agree (the same boolean, the same set of tags, the
  same time); when they disagree the file fails with a message naming both, since either reading would be
  a guess.

Publication times are ``YYYY-MM-DD``, ``YYYY-MM-DD hh:mm[:ss]`` or ISO 8601 (YAML's own timestamps
included). A value without a zone is read in the article time zone (``ARTICLE_TIMEZONE``, Asia/Tokyo by
default, as Zenn reads it); a value with one keeps it. A date alone is 00:00 in that zone. The result is
naive UTC, as the database stores times, and must be one the database holds (years 1000 to 9999 in
UTC, MySQL's and TiDB's ``DATETIME``); a file name's leading date outside them is no date.

A key that is neither known nor an alias is a warning, never a failure: a typo (``tittle``) or a key of
another tool (Zenn's ``publication_name``) should be visible without taking the article down.

Messages never write a value out whole: ``kind_of`` and ``shown`` cut it to a few dozen characters (a
4,300-digit number is not even turned into text).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, tzinfo
from typing import Any

from function.errors import ArticleParseError

KNOWN_KEYS = frozenset(
    {
        "title",
        "type",
        "description",
        "thumbnail",
        "emoji",
        "publish",
        "published",
        "tags",
        "topics",
        "category",
        "published_at",
        "date",
    }
)

_DATE_TIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?", re.ASCII)
# A slug's leading date: 2024-01-21-title or 20240121-title (or the date alone); "_" also separates.
_SLUG_DATE_RE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})(?:[-_]|$)", re.ASCII)
# What a DATETIME column holds on MySQL and TiDB (naive UTC, microseconds).
EARLIEST_TIME = datetime(1000, 1, 1)
LATEST_TIME = datetime.max
# Unknown keys named one by one, then counted: a file of 9,000 keys is not 9,000 warnings.
MAX_KEYS_NAMED = 20
SHOWN_CHARS = 40


def unknown_key_warnings(meta: dict[Any, Any], known: frozenset[str], where: str) -> tuple[str, ...]:
    """A warning per key of ``meta`` not in ``known``, in file order (``where``: "front matter",
    "config"); past ``MAX_KEYS_NAMED`` keys, one that counts the rest."""
    unknown = [key for key in meta if key not in known]
    named = tuple(f"unknown {where} key {shown(key)} (ignored)" for key in unknown[:MAX_KEYS_NAMED])
    rest = len(unknown) - MAX_KEYS_NAMED
    return named + ((f"{rest} more unknown {where} keys (ignored)",) if rest > 0 else ())


def shown(value: object) -> str:
    """``value`` as a message may quote it: a string cut to ``SHOWN_CHARS`` and quoted (lone surrogates
    and control characters escaped), anything else as ``kind_of`` names it."""
    if isinstance(value, str):
        return repr(value if len(value) <= SHOWN_CHARS else value[: SHOWN_CHARS - 3] + "...")
    return kind_of(value)


def kind_of(value: object) -> str:
    """How a YAML value reads to an author: "a number (2024)", "a date (2024-01-01)", "a list"..."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        if value.bit_length() > 128:
            # Python refuses to write an integer of more than 4,300 digits as text; none is needed.
            return f"a number (of about {int(value.bit_length() * 0.30103) + 1} digits)"
        return f"a number ({value!r})"
    if isinstance(value, float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({shown(value)})"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, date):
        return f"a date ({value})"
    return f"a {type(value).__name__} value"


def publish_flag(meta: dict[Any, Any]) -> bool:
    """``publish`` (or Zenn's ``published``): a YAML boolean; null or absent is a draft."""
    values = {key: _boolean(meta, key) for key in ("publish", "published") if meta.get(key) is not None}
    if len(set(values.values())) > 1:
        raise ArticleParseError(
            "front matter: 'published' and 'publish' disagree "
            f"(published: {str(values['published']).lower()}, publish: {str(values['publish']).lower()});"
            " keep one of them"
        )
    return next(iter(values.values()), False)


def check_topics_agree(tags_from_tags: set[str] | None, tags_from_topics: set[str] | None) -> None:
    """``tags`` and Zenn's ``topics`` may both be given only when they name the same tags."""
    if tags_from_tags is not None and tags_from_topics is not None and tags_from_tags != tags_from_topics:
        raise ArticleParseError(
            "front matter: 'topics' and 'tags' disagree "
            f"(topics: {_listed(tags_from_topics)}, tags: {_listed(tags_from_tags)}); keep one of them"
        )


def _listed(tags: set[str]) -> str:
    first = sorted(tags)[:5]
    return "[" + ", ".join(map(shown, first)) + (", ...]" if len(tags) > len(first) else "]")


def topic_tag(topic: str) -> str:
    """A Zenn topic as a tag: one level, stripped ("" when blank, dropped by the caller)."""
    tag = topic.strip()
    if "/" in tag:
        raise ArticleParseError(
            f"front matter: the topic {shown(tag)} contains '/': a topic is one tag of one level"
            " (write paths such as tech/aws under 'tags')"
        )
    return tag


def publication_time(meta: dict[Any, Any], zone: tzinfo) -> datetime | None:
    """The time ``published_at`` (or ``date``) names, as naive UTC; None when neither is given."""
    values = {
        key: _time_value(key, meta[key], zone)
        for key in ("published_at", "date")
        if meta.get(key) is not None and meta.get(key) != ""
    }
    if len(set(values.values())) > 1:
        raise ArticleParseError(
            "front matter: 'published_at' and 'date' disagree (in UTC, published_at: "
            f"{values['published_at']:%Y-%m-%d %H:%M:%S}, date: {values['date']:%Y-%m-%d %H:%M:%S}); "
            "keep one of them"
        )
    return next(iter(values.values()), None)


def slug_date(slug: str, zone: tzinfo) -> datetime | None:
    """00:00 in ``zone`` (as naive UTC) of the date a slug starts with (``2024-01-21-…``, ``20240121-…``),
    or None when it starts with none (or with digits that are not a real date)."""
    match = _SLUG_DATE_RE.match(slug)
    if match is None:
        return None
    try:
        day = date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None
    return _to_naive_utc(datetime.combine(day, time(), zone))  # None: a day the database cannot hold


def _boolean(meta: dict[Any, Any], key: str) -> bool:
    value = meta[key]
    if not isinstance(value, bool):
        raise ArticleParseError(f"front matter: '{key}' must be true or false, not {kind_of(value)}")
    return value


def _time_value(key: str, value: Any, zone: tzinfo) -> datetime:
    if isinstance(value, datetime):  # a YAML timestamp (2024-01-21 10:00:00, with or without a zone)
        moment = value
    elif isinstance(value, date):  # a YAML date (2024-01-21)
        moment = datetime.combine(value, time())
    elif isinstance(value, str):
        moment = _parse_time_text(key, value.strip())
    else:
        raise ArticleParseError(
            f"front matter: '{key}' must be a date such as 2024-01-21 or 2024-01-21 09:30,"
            f" not {kind_of(value)}"
        )
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    utc = _to_naive_utc(moment)
    if utc is None:
        raise ArticleParseError(
            f"front matter: '{key}' must be a time between {EARLIEST_TIME:%Y-%m-%d} and 9999-12-31 in UTC"
            " (what the database holds)"
        )
    return utc


def _parse_time_text(key: str, text: str) -> datetime:
    problem = (
        f"front matter: '{key}' is not a date: {shown(text)} (write 2024-01-21, 2024-01-21 09:30"
        " or an ISO 8601 time)"
    )
    match = _DATE_TIME_RE.fullmatch(text)
    try:
        if match is not None:
            year, month, day, hour, minute, second = (int(g) if g else 0 for g in match.groups())
            return datetime(year, month, day, hour, minute, second)
        return datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise ArticleParseError(problem) from None


def _to_naive_utc(moment: datetime) -> datetime | None:
    """``moment`` as naive UTC, or None when that is not a time the database holds."""
    try:
        utc = moment.astimezone(UTC).replace(tzinfo=None)
    except (OverflowError, ValueError):  # past year 1 or 9999 once the zone's offset is applied
        return None
    return utc if EARLIEST_TIME <= utc <= LATEST_TIME else None
