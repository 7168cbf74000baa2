"""The preview's HTML pages: the list of articles and books, each article, each book and its chapters,
drafts marked, each file's problems on its page; and the event stream that tells an open page to reload.

The article's HTML is the stored ``contentHtml`` exactly as the read API serves it, inside
``<div class="blog-content">`` with ``/static/content.css``; diagrams are drawn by mermaid in the page
with the configuration ``docs/front-ends.md`` gives front ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, Response, current_app, render_template, request, send_file

from function.preview.session import AUTHOR, Preview
from function.store.models import utc_now

EXTENSION = "blog_api_preview"
# Sent to an open page between changes, so proxies and the browser keep the stream open.
KEEP_ALIVE_S = 15.0
# The mermaid build a page loads when the preview was not given a local copy (``--mermaid``).
MERMAID_CDN = "https://cdn.jsdelivr.net/npm/mermaid@12/dist/mermaid.min.js"
LOCAL_MERMAID = "/_preview/mermaid.min.js"

blueprint = Blueprint("preview_pages", __name__, template_folder="templates")


class PreviewConfig:
    """What the pages need besides the store: the preview and where mermaid comes from."""

    def __init__(self, preview: Preview, mermaid_file: str | None) -> None:
        self.preview = preview
        self.mermaid_file = mermaid_file

    @property
    def mermaid_url(self) -> str:
        return LOCAL_MERMAID if self.mermaid_file else MERMAID_CDN


def _config() -> PreviewConfig:
    config: PreviewConfig = current_app.extensions[EXTENSION]
    return config


def _page(template: str, status: int = 200, **values: Any) -> tuple[str, int, dict[str, str]]:
    config = _config()
    preview = config.preview
    html = render_template(
        template,
        folder=str(preview.folder),
        version=preview.version,
        sync_error=preview.problems.sync_error,
        mermaid_url=config.mermaid_url,
        when=_when,
        now=utc_now(),
        **values,
    )
    # Always the newest: the page is what is in the folder now.
    return html, status, {"Cache-Control": "no-store"}


@blueprint.get("/")
def index() -> Any:
    preview = _config().preview
    with preview.reads() as reads:
        articles, books = reads.articles(_author()), reads.books(_author())
    known = {article.path for article in articles}
    # A file that never synced has no row: it is listed with its problem, and has a page of its own.
    unsynced = sorted(path for path in preview.problems.failed_paths() if path not in known)
    return _page(
        "index.html",
        articles=articles,
        books=books,
        problems=preview.problems.everything(),
        unsynced=unsynced,
        slug_of=_slug_of_path,
    )


@blueprint.get("/articles/<slug>")
def article(slug: str) -> Any:
    preview = _config().preview
    with preview.reads() as reads:
        found = reads.article(_author(), slug)
    path = found.path if found is not None else _article_path(slug)
    problems = preview.problems.of_file(path)
    if found is None and not problems:
        return _page("missing.html", 404, what=f"no article {slug!r} in {preview.folder}")
    return _page("article.html", article=found, slug=slug, path=path, problems=problems)


@blueprint.get("/books/<slug>")
def book(slug: str) -> Any:
    preview = _config().preview
    with preview.reads() as reads:
        found = reads.book(_author(), slug)
    problems = preview.problems.of_book(slug)
    if found is None and not problems:
        return _page("missing.html", 404, what=f"no book {slug!r} in {preview.folder}")
    return _page("book.html", book=found, slug=slug, problems=problems)


@blueprint.get("/books/<slug>/<chapter_slug>")
def chapter(slug: str, chapter_slug: str) -> Any:
    preview = _config().preview
    with preview.reads() as reads:
        found_book = reads.book(_author(), slug)
        found = reads.chapter(_author(), slug, chapter_slug)
    if found_book is None or found is None:
        return _page("missing.html", 404, what=f"no chapter {chapter_slug!r} in book {slug!r}")
    chapters = list(found_book.chapters)
    index = next(i for i, c in enumerate(chapters) if c.slug == found.slug)
    return _page(
        "chapter.html",
        book=found_book,
        chapter=found,
        previous=chapters[index - 1] if index > 0 else None,
        next=chapters[index + 1] if index + 1 < len(chapters) else None,
        problems=preview.problems.of_file(found.path),
    )


@blueprint.get("/_preview/version")
def version() -> Response:
    """The current version, for a page (or a test) that polls instead of listening."""
    return Response(json.dumps({"version": _config().preview.version}), mimetype="application/json")


@blueprint.get("/_preview/events")
def events() -> Response:
    """Server-sent events: the version, at once if it differs from ``since``, then at every change."""
    preview = _config().preview
    seen = request.args.get("since", default=-1, type=int)

    def stream() -> Iterator[str]:
        # A dropped stream is reopened by the browser after this many milliseconds.
        yield "retry: 500\n\n"
        current = seen
        while True:
            now = preview.wait_for_change(current, KEEP_ALIVE_S)
            if now != current:
                current = now
                yield f"data: {now}\n\n"
            else:
                yield ": still here\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return Response(stream(), mimetype="text/event-stream", headers=headers)


@blueprint.get(LOCAL_MERMAID)
def mermaid_script() -> Any:
    mermaid_file = _config().mermaid_file
    if not mermaid_file:
        return _page("missing.html", 404, what="no local mermaid: pages load it from its CDN")
    return send_file(mermaid_file, mimetype="text/javascript", max_age=3600)


def _author() -> str:
    return AUTHOR


def _article_path(slug: str) -> str:
    folder = _config().preview.services.settings.articles_dir.strip("/")
    return f"{folder}/{slug}.md" if folder else f"{slug}.md"


def _slug_of_path(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _when(moment: datetime | None) -> str:
    """A stored (naive UTC) time in the articles' time zone, to the minute."""
    if moment is None:
        return ""
    zone = ZoneInfo(_config().preview.services.settings.article_timezone)
    return moment.replace(tzinfo=UTC).astimezone(zone).strftime("%Y-%m-%d %H:%M")
