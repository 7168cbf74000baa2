"""The feed and the sitemap are well-formed XML whatever an article holds: characters XML 1.0 forbids
are removed when the article is read (with a warning), and once more when the documents are built."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from xml.etree import ElementTree as ET

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.api.feeds import atom_feed, sitemap
from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError
from function.store.records import ArticleView, SitemapEntry
from tests.api.conftest import USER, ReadApi
from tests.kit.builders import article, at

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).replace(tzinfo=None)
SITE = "https://blog.example.com"
# Every character XML forbids, and text around them.
FORBIDDEN = [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + ["\ufffe", "\uffff"]
nasty_text = st.lists(st.one_of(st.sampled_from(FORBIDDEN), st.characters(codec="utf-8")), max_size=40).map(
    "".join
)


def _view(parsed: ParsedArticle) -> ArticleView:
    return ArticleView(
        1, parsed.slug, parsed.title, parsed.content, parsed.content_html, parsed.description,
        parsed.type, parsed.thumbnail, parsed.tags, T0, T0, T0,
    )  # fmt: skip


def _strict(document: bytes) -> ET.Element:
    """``document`` read by a strict XML parser (expat, through ElementTree): ill-formed is an error."""
    return ET.fromstring(document)  # noqa: S314 - the server's own documents, read by the test


def _documents(views: list[ArticleView]) -> None:
    _strict(atom_feed(USER, views, site_url=SITE, self_url=SITE + "/feed.xml"))
    _strict(sitemap([SitemapEntry(v.slug, T0, T0) for v in views], site_url=SITE))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=nasty_text, description=nasty_text, body=nasty_text, tag=nasty_text)
def test_any_article_that_parses_gives_a_well_formed_feed_and_sitemap(
    title: str, description: str, body: str, tag: str
) -> None:
    # GIVEN an article file whose front matter and body may hold any character, literally or escaped
    front = {"title": title, "description": description, "tags": [tag], "published": True}
    text = "---\n" + json.dumps(front, ensure_ascii=False) + "\n---\n" + body + "\n"
    try:
        parsed = parse_article("articles/any.md", "0" * 40, text.encode("utf-8", "surrogatepass"))
    except ArticleParseError:
        return  # refused, with a message: never in a feed
    # THEN what reaches the feed and the sitemap is well-formed XML
    _documents([_view(parsed)])


def test_forbidden_characters_are_removed_with_a_warning() -> None:
    text = "---\ntitle: Bad\ufffe title\ndescription: 'tab\tand\x01'\n---\nA\x1b[31m body\x00.\n"
    parsed = parse_article("articles/bad.md", "0" * 40, text.encode())
    assert parsed.title == "Bad title"
    assert parsed.description == "tab\tand"
    assert parsed.content == "A[31m body."
    assert any("XML 1.0 forbids" in w for w in parsed.warnings)
    _documents([_view(parsed)])


def test_an_article_stored_before_still_gives_a_well_formed_feed(api: ReadApi) -> None:
    # GIVEN an article an older version stored with a C0 control in its body and U+FFFE in its title
    api.add([article("old", title="Old\ufffe", body="bell\x07")], at(0))
    # THEN the feed and the sitemap served parse strictly, the rest of the text intact
    feed = _strict(api.get(f"/users/{USER}/feed.xml").data)
    _strict(api.get(f"/users/{USER}/sitemap.xml").data)
    titles = [e.text for e in feed.iter("{http://www.w3.org/2005/Atom}title")]
    assert "Old" in titles
