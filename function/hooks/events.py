"""The events blog-api sends to front ends, their bodies, and how two pending ones merge into one.

Every body is ``{"type", "timestamp", "data"}`` (the layout Standard Webhooks recommends), small JSON
with slugs and addresses, never an article's content; ``function.hooks.schema`` describes it.

- ``articles.changed``: after a sync that changed what readers see, the slugs ``published`` (visible now,
  not before), ``updated`` (visible before and after, content changed) and ``unpublished`` (visible
  before, not any more). Each entry is ``{"slug", "url", "apiPath", "ogpUrl"}`` (``ogpUrl``: the
  article's share image, as the read API serves it; absent from events queued by a version that did not
  send it). When Zenn books changed too,
  ``books`` holds the same three lists of books (``/books/<slug>``); absent when none did.
- ``sync.failed``: a delivery whose sync ended failed (a file could not be fetched, the time budget ran
  out, GitHub or the database was down).
- ``ping``: sent by ``blog-api hooks test``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

ARTICLES_CHANGED = "articles.changed"
SYNC_FAILED = "sync.failed"
PING = "ping"
# What an endpoint may subscribe to (every endpoint answers pings).
SUBSCRIBABLE = (ARTICLES_CHANGED, SYNC_FAILED)
TYPES = (*SUBSCRIBABLE, PING)

# A first sync of a large blog would otherwise list every article: past this many slugs in one event
# the lists are cut and ``truncated`` says so (a receiver then refreshes everything).
MAX_SLUGS = 500
# Failed paths named in a sync.failed event.
MAX_FAILED_PATHS = 50
# The public address of an article, under SITE_URL (as in the feed and the sitemap).
ARTICLE_PAGE = "/articles/{slug}"
KINDS = ("published", "updated", "unpublished")
BOOK_PAGE = "/books/{slug}"


def article_ref(user: str, slug: str, site_url: str | None, ogp_url: str | None = None) -> dict[str, Any]:
    """``{"slug", "url", "apiPath", "ogpUrl"}``: the page under SITE_URL (null without it), the API's
    path and the share image (left out when ``ogp_url`` is None: not known)."""
    quoted = quote(slug, safe="")
    ref = {
        "slug": slug,
        "url": site_url.rstrip("/") + ARTICLE_PAGE.format(slug=quoted) if site_url else None,
        "apiPath": f"/users/{quote(user, safe='')}/articles/{quoted}",
    }
    if ogp_url is not None:
        ref["ogpUrl"] = ogp_url
    return ref


def book_ref(user: str, slug: str, site_url: str | None) -> dict[str, Any]:
    """``{"slug", "url", "apiPath"}`` of a Zenn book."""
    quoted = quote(slug, safe="")
    return {
        "slug": slug,
        "url": site_url.rstrip("/") + BOOK_PAGE.format(slug=quoted) if site_url else None,
        "apiPath": f"/users/{quote(user, safe='')}/books/{quoted}",
    }


def articles_changed(
    user: str,
    *,
    published: Sequence[str],
    updated: Sequence[str],
    unpublished: Sequence[str],
    head_sha: str | None,
    site_url: str | None,
    books: Mapping[str, Sequence[str]] | None = None,
    ogp_urls: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``data`` of an ``articles.changed`` event (``books``: the changed books' slugs by kind;
    ``ogp_urls``: the articles' share images by slug; a slug it lacks gets no ``ogpUrl``)."""
    lists = {"published": published, "updated": updated, "unpublished": unpublished}
    data = _changes_data(
        user, {k: list(dict.fromkeys(v)) for k, v in lists.items()}, head_sha, site_url, ogp_urls=ogp_urls
    )
    return _with_books(data, user, {k: list(dict.fromkeys(v)) for k, v in (books or {}).items()}, site_url)


def _with_books(
    data: dict[str, Any], user: str, books: Mapping[str, list[str]], site_url: str | None
) -> dict[str, Any]:
    if any(books.get(kind) for kind in KINDS):
        data["books"] = {
            kind: [book_ref(user, slug, site_url) for slug in books.get(kind, [])] for kind in KINDS
        }
    return data


def _changes_data(
    user: str,
    lists: Mapping[str, list[str]],
    head_sha: str | None,
    site_url: str | None,
    truncated: bool = False,
    *,
    ogp_urls: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    def ref(slug: str) -> dict[str, Any]:
        return article_ref(user, slug, site_url, None if ogp_urls is None else ogp_urls.get(slug))

    kept: dict[str, list[str]] = {}
    room = MAX_SLUGS
    for kind in KINDS:
        slugs = lists.get(kind, [])
        kept[kind] = slugs[: max(room, 0)]
        truncated = truncated or len(slugs) > room
        room -= len(kept[kind])
    return {
        "user": user,
        **{kind: [ref(slug) for slug in kept[kind]] for kind in KINDS},
        "headSha": head_sha,
        "truncated": truncated,
    }


def merge_changes(older: Mapping[str, Any], newer: Mapping[str, Any], site_url: str | None) -> dict[str, Any]:
    """One ``articles.changed`` for two that were pending for the same endpoint: each slug once, in the
    list of its latest change, except that a slug published and then updated stays ``published`` (the
    receiver never saw it)."""
    lists = _latest_kinds(older, newer)
    books = _latest_kinds(older.get("books", {}), newer.get("books", {}))
    truncated = bool(older.get("truncated")) or bool(newer.get("truncated"))
    user = str(newer["user"])
    ogp_urls = _latest_ogp_urls(older, newer)
    data = _changes_data(user, lists, newer.get("headSha"), site_url, truncated, ogp_urls=ogp_urls)
    return _with_books(data, user, books, site_url)


def _latest_ogp_urls(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, str]:
    """Each slug's share image as the newer event says it, else as the older one did."""
    found: dict[str, str] = {}
    for data in (older, newer):
        for kind in KINDS:
            for ref in data.get(kind, []):
                if "ogpUrl" in ref:
                    found[ref["slug"]] = ref["ogpUrl"]
    return found


def _latest_kinds(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, list[str]]:
    kind_of: dict[str, str] = {}
    for data in (older, newer):
        for kind in KINDS:
            for ref in data.get(kind, []):
                slug = ref["slug"]
                keep_published = kind == "updated" and kind_of.get(slug) == "published"
                kind_of.pop(slug, None)  # re-inserted: the order is that of the latest change
                kind_of[slug] = "published" if keep_published else kind
    lists: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for slug, kind in kind_of.items():
        lists[kind].append(slug)
    return lists


def sync_failed(
    user: str,
    *,
    delivery: str | None,
    head_sha: str | None,
    reason: str,
    failed_paths: Sequence[str] = (),
    left: int = 0,
) -> dict[str, Any]:
    """The ``data`` of a ``sync.failed`` event: which delivery, why (a short reason, never an error's
    text, which may name internal hosts), and the repository paths that failed."""
    return {
        "user": user,
        "delivery": delivery,
        "headSha": head_sha,
        "reason": reason,
        "failedPaths": list(failed_paths)[:MAX_FAILED_PATHS],
        "filesLeft": left,
        "failures": 1,
    }


def merge_failures(
    older: Mapping[str, Any], newer: Mapping[str, Any], site_url: str | None
) -> dict[str, Any]:
    """Two pending ``sync.failed`` events as one: the newer, counting both."""
    del site_url  # the same signature as merge_changes
    return {**newer, "failures": int(older.get("failures", 1)) + int(newer.get("failures", 1))}


def ping(user: str, endpoint_id: str) -> dict[str, Any]:
    """The ``data`` of a ``ping``: who it is for, nothing else."""
    return {"user": user, "endpoint": endpoint_id, "message": "blog-api webhook test"}


def body(event_type: str, timestamp: datetime, data: Mapping[str, Any]) -> bytes:
    """The exact bytes sent and signed: compact UTF-8 JSON."""
    document = {"type": event_type, "timestamp": iso_time(timestamp), "data": data}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def iso_time(value: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z`` (naive values are UTC)."""
    aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return aware.isoformat(timespec="milliseconds").replace("+00:00", "Z")


MERGERS = {ARTICLES_CHANGED: merge_changes, SYNC_FAILED: merge_failures}
