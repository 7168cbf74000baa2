"""Read routes for the blog's front end: published articles only.

Every answer of this blueprint goes through ``_finish``: validators, 304, gzip and CORS. The webhook
and ``/events`` blueprints have no such hook, so they never answer CORS.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, g, request
from werkzeug.exceptions import MethodNotAllowed

from function.api import cors, feeds, http_cache
from function.api.cursor import CursorCodec
from function.api.facets import facet_counts, tag_counts
from function.api.paging import PageNumber, page_number
from function.api.serialise import article_json, image_bases, summary_json
from function.api.tag_params import tag_filter
from function.errors import BadRequest, NotFound
from function.ogp.images import OgpImages, ogp_images
from function.store.records import ArticleView
from function.web import services
from shared.names import FACETS_ROUTE, SEARCH_ROUTE
from shared.runtime_settings import variable

if TYPE_CHECKING:
    from function.store.tag_filter import TagFilter

blueprint = Blueprint("articles", __name__)

_MAX_PARAM = 200
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
_READ_METHODS = ["GET", "OPTIONS"]  # HEAD comes with GET


@blueprint.before_request
def _preflight() -> Response | None:
    if request.method != "OPTIONS":
        return None
    answer = cors.preflight(request, services().settings.cors_allowed_origins)
    if answer is None:
        # Not a preflight from a listed origin: the route has no OPTIONS for anyone else.
        raise MethodNotAllowed(valid_methods=["GET", "HEAD"])
    return answer


@blueprint.after_request
def _finish(response: Response) -> Response:
    settings = services().settings
    if response.status_code != 204:
        response = http_cache.finish(
            response,
            request,
            cache_control=settings.read_cache_control,
            last_modified=g.get("last_modified"),
        )
    cors.add_headers(response, request, settings.cors_allowed_origins)
    return response


def _param(name: str) -> str | None:
    value = request.args.get(name)
    if value is None or value == "":
        return None
    if len(value) > _MAX_PARAM:
        raise BadRequest(f"'{name}' is longer than {_MAX_PARAM} characters")
    return value


def _limit() -> int:
    value = request.args.get("limit")
    if value is None:
        return DEFAULT_LIMIT
    if not (value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_LIMIT):
        raise BadRequest(f"'limit' must be a whole number from 1 to {MAX_LIMIT}")
    return int(value)


def _cursor_codec() -> CursorCodec:
    """The codec on the database's cursor key, read once per app (a process serves one app)."""
    codec = current_app.extensions.get("blog_api_cursor_codec")
    if codec is None:
        # Imported here: the accept path, which imports this module, must not load the database stack.
        from function.store.server_keys import CURSOR_KEY, server_key

        with services().store() as store:
            key = server_key(store.db, CURSOR_KEY)
        codec = current_app.extensions.setdefault("blog_api_cursor_codec", CursorCodec(key))
    assert isinstance(codec, CursorCodec)
    return codec


def _ogp() -> OgpImages:
    """The share images as the settings configure them, made once per app."""
    images = current_app.extensions.get("blog_api_ogp_images")
    if images is None:
        images = current_app.extensions.setdefault("blog_api_ogp_images", ogp_images(services().settings))
    assert isinstance(images, OgpImages)
    return images


def _ogp_url(user: str, article: ArticleView) -> str:
    return _ogp().url(user=user, slug=article.slug, title=article.title, thumbnail=article.thumbnail)


def _filters() -> tuple[str | None, str | None, TagFilter | None]:
    """``type``, ``tag`` (the one-tag form) and the ``tags``/``mode`` filter of the request."""
    kind, tag = _param("type"), _param("tag")
    if tag is not None:
        tag = tag.strip("/")
    return kind, tag, tag_filter(request.args)


def _changed(articles: list[ArticleView]) -> datetime | None:
    """The newest change among ``articles``, for Last-Modified (a scheduled article's change is its
    publication time)."""
    times = [max(a.updated_at, a.published_at or a.updated_at) for a in articles]
    return max(times) if times else None


@blueprint.route("/users/<name>/articles", methods=_READ_METHODS)
def list_articles(name: str) -> tuple[dict[str, Any], int]:
    numbered = page_number(request.args)
    kind, tag, tags = _filters()
    if numbered is not None:
        return _numbered_list(name, numbered, kind, tag, tags)
    limit = _limit()
    filters: tuple[str | None, ...] = (kind.lower() if kind else None, tag.lower() if tag else None)
    if tags is not None:
        filters += (tags.key(),)  # only then: a cursor made without ``tags`` stays valid
    codec = _cursor_codec()
    cursor = request.args.get("cursor") or None
    after = codec.decode(cursor, user=name, filters=filters) if cursor else None
    with services().store() as store:
        page = store.reads.published_page(name, limit=limit, after=after, type=kind, tag=tag, tags=tags)
    if page is None:
        raise NotFound(f"no user named {name!r}")
    g.last_modified = _changed(page.articles)
    next_cursor = codec.encode(page.next_key, user=name, filters=filters) if page.next_key else None
    summaries = [summary_json(a, ogp_url=_ogp_url(name, a)) for a in page.articles]
    return {"articles": summaries, "nextCursor": next_cursor}, 200


def _numbered_list(
    name: str, numbered: PageNumber, kind: str | None, tag: str | None, tags: TagFilter | None
) -> tuple[dict[str, Any], int]:
    """The list by page number, with the totals a numbered pager needs."""
    with services().store() as store:
        page = store.reads.numbered_page(
            name, page=numbered.page, per_page=numbered.per_page, type=kind, tag=tag, tags=tags
        )
    if page is None:
        raise NotFound(f"no user named {name!r}")
    g.last_modified = _changed(page.articles)
    return {
        "articles": [summary_json(a, ogp_url=_ogp_url(name, a)) for a in page.articles],
        "totalCount": page.total,
        "page": numbered.page,
        "perPage": numbered.per_page,
        "totalPages": numbered.total_pages(page.total),
    }, 200


# A fixed word after /articles/ (this route and the search's): Flask tries fixed path segments before
# variable ones, so these routes win over an article whose slug is the same word (a Zenn slug is at
# least 12 characters long; the sync warns about any other article named so).
@blueprint.route(f"/users/<name>/articles/{FACETS_ROUTE}", methods=_READ_METHODS)
def tag_facets(name: str) -> tuple[dict[str, Any], int]:
    kind, tag, tags = _filters()
    with services().store() as store:
        sets = store.reads.tag_facets(name, type=kind, tag=tag, tags=tags)
    if sets is None:
        raise NotFound(f"no user named {name!r}")
    return {"facets": facet_counts(sets)}, 200


@blueprint.route(f"/users/<name>/articles/{SEARCH_ROUTE}", methods=_READ_METHODS)
def search_articles(name: str) -> tuple[dict[str, Any], int]:
    """The user's published articles that match ``q``, closest first (``function.api.search``)."""
    # Imported here: the accept path loads this module, and no search or store module with it.
    from function.api.search import run_search
    from function.api.search_params import search_params
    from function.store.search_reads import Filters

    params = search_params(request.args)
    kind, tag, tags = _filters()
    with services().store() as store:
        result = run_search(
            store, services().semantic_search(), name, params, Filters(type=kind, tag=tag, tags=tags)
        )
    g.last_modified = _changed([view for view, _ in result.hits])
    articles = [
        {**summary_json(view, ogp_url=_ogp_url(name, view)), "distance": distance}
        for view, distance in result.hits
    ]
    return {
        "articles": articles,
        "query": params.query,
        "limit": params.limit,
        "offset": params.offset,
        "totalCount": result.total,
    }, 200


@blueprint.route("/users/<name>/articles/<slug>", methods=_READ_METHODS)
def get_article(name: str, slug: str) -> tuple[dict[str, Any], int]:
    with services().store() as store:
        article = store.reads.published_article(name, slug)
    if article is None:
        raise NotFound(f"no published article {slug!r} for {name!r}")
    g.last_modified = _changed([article])
    images = image_bases(services().settings)
    return article_json(article, ogp_url=_ogp_url(name, article), images=images), 200


@blueprint.route("/users/<name>/tags", methods=_READ_METHODS)
def list_tags(name: str) -> tuple[dict[str, Any], int]:
    with services().store() as store:
        pairs = store.reads.published_tag_paths(name)
    if pairs is None:
        raise NotFound(f"no user named {name!r}")
    return {"tags": tag_counts(pairs)}, 200


@blueprint.route("/users/<name>/feed.xml", methods=_READ_METHODS)
def feed(name: str) -> Response:
    tags = tag_filter(request.args)
    with services().store() as store:
        articles = store.reads.published_articles(name, limit=feeds.FEED_SIZE, tags=tags)
    if articles is None:
        raise NotFound(f"no user named {name!r}")
    g.last_modified = _changed(articles)
    site_url = _site_url("feed")
    # A filtered feed is another feed: its id and self link name the filter (as normalised, never the
    # query string as the client wrote it).
    query = "?" + urlencode({"tags": ",".join(tags.paths), "mode": tags.mode}) if tags else ""
    body = feeds.atom_feed(
        name,
        articles,
        site_url=site_url,
        self_url=site_url + request.path + query,
        images=[_ogp_url(name, a) for a in articles],
        # A feed reader has no page to resolve a root-relative URL against: the app's own /assets
        # becomes SITE_URL's, as the feed's links are.
        bases=image_bases(services().settings).absolute(site_url),
    )
    return Response(body, 200, content_type="application/atom+xml; charset=utf-8")


@blueprint.route("/users/<name>/sitemap.xml", methods=_READ_METHODS)
def sitemap(name: str) -> Response:
    with services().store() as store:
        entries = store.reads.sitemap_entries(name)
        books = store.book_reads.book_sitemap_entries(name) if entries is not None else []
    if entries is None:
        raise NotFound(f"no user named {name!r}")
    body = feeds.sitemap(entries, site_url=_site_url("sitemap"), books=books)
    return Response(body, 200, content_type="application/xml; charset=utf-8")


def _site_url(document: str) -> str:
    """``SITE_URL``, or NotFound naming it. Never the request's ``Host``: a shared cache would keep,
    and hand every reader, a document whose links a stranger chose."""
    site_url = services().settings.site_url
    if not site_url:
        raise NotFound(
            f"the {document} is off: {variable('site_url')} (the blog's public URL, which its links "
            "point to) is not set"
        )
    return site_url
