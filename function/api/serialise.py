"""The JSON shape of what the read routes answer: camelCase keys, ISO 8601 UTC times ending in ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from function.store.records import ArticleView

if TYPE_CHECKING:
    from function.articles.images import ImageBases
    from function.settings import Settings


def iso_utc(value: datetime | None) -> str | None:
    """``2026-12-02T19:49:31.123456Z`` for a naive-UTC (or aware) time; None stays None."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def image_bases(settings: Settings) -> ImageBases:
    """Where the images of an answer are served from now: ``ASSET_URL`` (the asset domain on AWS, the
    app's own ``/assets`` by default) and ``ARTICLE_ASSET_BASE_URL``."""
    # Imported here, as each use below: the accept path loads this module and not the articles package.
    from function.articles.images import ImageBases

    return ImageBases(settings.asset_url, settings.asset_base_url)


def served_html(stored: str, images: ImageBases | None) -> str:
    """Stored HTML with its image URLs composed from ``images`` (None: as stored, e.g. a summary's "")."""
    if images is None or not stored:
        return stored
    from function.articles.images import compose

    return compose(stored, images)


def article_json(view: ArticleView, *, ogp_url: str = "", images: ImageBases | None = None) -> dict[str, Any]:
    """An ``Article``: the article as the front end reads it. ``ogp_url``: its share image
    (``function.ogp``); ``description`` is always a string, ``""`` when the article has none; ``images``:
    where its images are served from (``image_bases``)."""
    return {
        "articleId": str(view.id),
        "title": view.title,
        "slug": view.slug,
        "content": view.content,
        "contentHtml": served_html(view.content_html, images),
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
