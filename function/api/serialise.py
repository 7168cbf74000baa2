"""The JSON shape of what the read routes answer: camelCase keys, ISO 8601 UTC times ending in ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from function.store.records import ArticleView


def iso_utc(value: datetime | None) -> str | None:
    """``2026-12-02T19:49:31.123456Z`` for a naive-UTC (or aware) time; None stays None."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def article_json(view: ArticleView, *, ogp_url: str = "") -> dict[str, Any]:
    """An ``Article``: the article as the front end reads it. ``ogp_url``: its share image
    (``function.ogp``); ``description`` is always a string, ``""`` when the article has none."""
    return {
        "articleId": str(view.id),
        "title": view.title,
        "slug": view.slug,
        "content": view.content,
        "contentHtml": view.content_html,
        "toc": list(view.toc),
        "description": view.description or "",
        "type": view.type,
        "thumbnail": view.thumbnail,
        "ogpUrl": ogp_url,
        "emoji": view.emoji,
        "tags": list(view.tags),
        "publishedAt": iso_utc(view.published_at),
        "createdAt": iso_utc(view.created_at),
        "updatedAt": iso_utc(view.updated_at),
    }


# What a list entry leaves out: the body in both forms and its table of contents.
SUMMARY_OMITS = frozenset({"content", "contentHtml", "toc"})


def summary_json(view: ArticleView, *, ogp_url: str = "") -> dict[str, Any]:
    """A ``Summary``: the ``Article`` without ``content``, ``contentHtml`` and ``toc``. Derived from
    ``article_json`` so that a field added to the Article appears in the summary too."""
    whole = article_json(view, ogp_url=ogp_url)
    return {key: value for key, value in whole.items() if key not in SUMMARY_OMITS}
