"""Parsed articles for store tests, built the way the parser builds them (content hash included), and
writing them as the worker does."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from function.articles.parsed import ParsedArticle
from function.store.facade import PeeweeStore
from function.store.records import ApplyResult

T0 = datetime(2026, 3, 1, 9, 30, 15, 123456)


def at(seconds: float) -> datetime:
    """A time ``seconds`` after T0 (microsecond precision)."""
    return T0 + timedelta(seconds=seconds)


def article(
    slug: str,
    *,
    title: str | None = None,
    body: str = "Hello.",
    publish: bool = True,
    tags: tuple[str, ...] = (),
    type: str | None = "tech",
    blob_sha: str | None = None,
    path: str | None = None,
) -> ParsedArticle:
    """A parsed article; ``blob_sha`` defaults to one derived from the content, like git's."""
    title = title if title is not None else f"Title of {slug}"
    tags = tuple(sorted(set(tags)))
    html = f"<p>{body}</p>"
    fields = [title, type, "about " + slug, None, publish, list(tags), body, html]
    content_hash = hashlib.sha256(json.dumps(fields).encode()).hexdigest()
    return ParsedArticle(
        slug=slug,
        path=path or f"articles/{slug}.md",
        blob_sha=blob_sha or hashlib.sha1(f"{slug}:{content_hash}".encode()).hexdigest(),  # noqa: S324
        title=title,
        type=type,
        description="about " + slug,
        thumbnail=None,
        publish=publish,
        tags=tags,
        content=body,
        content_html=html,
        content_hash=content_hash,
    )


def moved(parsed: ParsedArticle, *, blob_sha: str, path: str | None = None) -> ParsedArticle:
    """The same content under another blob SHA (e.g. a whitespace-only change outside the content)."""
    return replace(parsed, blob_sha=blob_sha, path=path or parsed.path)


def apply_as_worker(
    store: PeeweeStore,
    user_id: int,
    articles: Sequence[ParsedArticle],
    archive: Sequence[str],
    now: datetime,
) -> ApplyResult:
    """``store.apply`` the way the worker calls it: with the user's index, read under the user's lock
    (there is no other way to apply)."""
    with store.locks.user_lock(user_id, 5.0):
        return store.reconcile.apply(
            user_id, articles, archive, now, index=store.reconcile.load_index(user_id)
        )
