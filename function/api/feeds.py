"""The Atom 1.0 feed and the sitemap: XML for feed readers and crawlers.

An article's public address is ``SITE_URL`` + ``/articles/<slug>`` (``ARTICLE_PATH``), and the feed's
own is ``SITE_URL`` + its path; without ``SITE_URL`` neither document is served (the request's ``Host``
is never used: it is whatever the client sent).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote
from xml.etree import ElementTree as ET  # building only, never parsing input

from function.api.serialise import iso_utc
from function.store.records import ArticleView, SitemapEntry

ARTICLE_PATH = "/articles/{slug}"
BOOK_PATH = "/books/{slug}"
ATOM_NS = "http://www.w3.org/2005/Atom"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
MEDIA_NS = "http://search.yahoo.com/mrss/"
FEED_SIZE = 20


def article_url(site_url: str, slug: str) -> str:
    return site_url.rstrip("/") + ARTICLE_PATH.format(slug=quote(slug, safe=""))


def atom_feed(
    user: str,
    articles: Sequence[ArticleView],
    *,
    site_url: str,
    self_url: str,
    images: Sequence[str] = (),
) -> bytes:
    """The feed of ``articles`` (newest first). Its ``updated`` is the newest change among them, so
    the document (and its ETag) depends on the articles only, never on the time of the request.
    ``images``: each article's share image (``ogpUrl``, "" for none), as Media RSS ``media:thumbnail``,
    which feed readers show beside the entry."""
    feed = ET.Element("feed", xmlns=ATOM_NS)
    if any(images):
        feed.set("xmlns:media", MEDIA_NS)
    _text(feed, "id", self_url)
    _text(feed, "title", user)
    times = [max(a.updated_at, a.published_at or a.updated_at) for a in articles]
    _text(feed, "updated", _atom_time(max(times)) if times else "1970-01-01T00:00:00Z")
    ET.SubElement(feed, "link", rel="self", type="application/atom+xml", href=self_url)
    ET.SubElement(feed, "link", rel="alternate", type="text/html", href=site_url.rstrip("/") + "/")
    author = ET.SubElement(feed, "author")
    _text(author, "name", user)
    for index, article in enumerate(articles):
        url = article_url(site_url, article.slug)
        entry = ET.SubElement(feed, "entry")
        _text(entry, "id", url)
        _text(entry, "title", article.title)
        ET.SubElement(entry, "link", rel="alternate", type="text/html", href=url)
        published = article.published_at or article.created_at
        _text(entry, "published", _atom_time(published))
        _text(entry, "updated", _atom_time(max(article.updated_at, published)))
        for tag in article.tags:
            ET.SubElement(entry, "category", term=_xml_text(tag))
        if article.description:
            _text(entry, "summary", article.description)
        image = images[index] if index < len(images) else ""
        if image:
            ET.SubElement(entry, "media:thumbnail", url=_xml_text(image))
        content = _text(entry, "content", article.content_html)
        content.set("type", "html")
    return _document(feed)


def sitemap(entries: Sequence[SitemapEntry], *, site_url: str, books: Sequence[SitemapEntry] = ()) -> bytes:
    """Every published article, then every published book (``books``), with its last change."""
    urlset = ET.Element("urlset", xmlns=SITEMAP_NS)
    located = [(article_url(site_url, e.slug), e) for e in entries]
    located += [(site_url.rstrip("/") + BOOK_PATH.format(slug=quote(e.slug, safe="")), e) for e in books]
    for loc, entry in located:
        url = ET.SubElement(urlset, "url")
        _text(url, "loc", loc)
        _text(url, "lastmod", _atom_time(max(entry.updated_at, entry.published_at)))
    return _document(urlset)


def _text(parent: ET.Element, tag: str, text: str) -> ET.Element:
    element = ET.SubElement(parent, tag)
    # An article stored by an older version may still hold characters XML forbids; ElementTree would
    # write them as they are, and the whole document would be ill-formed.
    element.text = _xml_text(text)
    return element


def _xml_text(text: str) -> str:
    # Imported here: the accept path imports this module (through the read routes) and must not load
    # the articles package.
    from function.articles.xml_chars import without_forbidden

    return without_forbidden(text)[0]


def _atom_time(value: object) -> str:
    text = iso_utc(value)  # type: ignore[arg-type]
    assert text is not None
    return text.split(".")[0] + "Z"


def _document(root: ET.Element) -> bytes:
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return body
