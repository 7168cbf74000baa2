"""GET /users/<name>/tags, feed.xml (Atom 1.0, read with feedparser) and sitemap.xml."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

import feedparser

from tests.api.conftest import SITE, USER, ReadApi
from tests.kit.builders import T0, article, at


def test_tags_count_the_articles_below_each_path(api: ReadApi) -> None:
    api.add(
        [
            article("a", tags=("tech/aws", "tech/aws/lambda")),
            article("b", tags=("tech/gcp",)),
            article("c", tags=("Life",)),
            article("draft", tags=("tech/aws",), publish=False),
        ],
        T0,
    )
    future = datetime.now(UTC).replace(tzinfo=None) + timedelta(days=1)
    api.add([article("scheduled", tags=("tech",))], future)

    answer = api.get(f"/users/{USER}/tags")

    assert answer.status_code == 200
    assert answer.get_json() == {
        "tags": [
            {"path": "Life", "count": 1},
            {"path": "tech", "count": 2},
            {"path": "tech/aws", "count": 1},
            {"path": "tech/aws/lambda", "count": 1},
            {"path": "tech/gcp", "count": 1},
        ]
    }


def test_tags_of_unknown_and_empty_users(api: ReadApi) -> None:
    assert api.get("/users/nobody/tags").status_code == 404
    assert api.get(f"/users/{USER}/tags").get_json() == {"tags": []}


def test_the_feed_is_atom_that_feed_readers_read(api: ReadApi) -> None:
    for i in range(25):
        api.add([article(f"post-{i:02}", title=f"記事 {i} <&>", body=f"**{i}**", tags=("tech",))], at(i * 60))

    answer = api.get(f"/users/{USER}/feed.xml")

    assert answer.status_code == 200
    assert answer.mimetype == "application/atom+xml"
    feed = feedparser.parse(answer.data)
    assert not feed.bozo, feed.bozo_exception
    assert feed.version == "atom10"
    assert len(feed.entries) == 20
    newest = feed.entries[0]
    assert newest.title == "記事 24 <&>"
    assert newest.link == f"{SITE}/articles/post-24"
    assert newest.id == f"{SITE}/articles/post-24"
    assert newest.content[0].type == "text/html"
    assert newest.content[0].value == "<p>**24**</p>"
    assert newest.summary == "about post-24"
    assert newest.published_parsed[:6] == at(24 * 60).timetuple()[:6]
    assert newest.updated_parsed is not None
    assert [t.term for t in newest.tags] == ["tech"]
    assert feed.feed.updated_parsed is not None
    assert [e.link.rsplit("/", 1)[1] for e in feed.entries][-1] == "post-05"


def test_the_feed_of_a_user_without_articles_is_still_valid(api: ReadApi) -> None:
    feed = feedparser.parse(api.get(f"/users/{USER}/feed.xml").data)
    assert not feed.bozo and feed.version == "atom10" and feed.entries == []
    assert api.get("/users/nobody/feed.xml").status_code == 404


def test_the_sitemap_lists_every_published_article(api: ReadApi) -> None:
    api.add([article(f"a{i}") for i in range(30)] + [article("draft", publish=False)], T0)

    answer = api.get(f"/users/{USER}/sitemap.xml")

    assert answer.status_code == 200 and answer.mimetype == "application/xml"
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    root = ET.fromstring(answer.data)  # noqa: S314 -- our own answer
    locs = sorted(loc.text or "" for loc in root.findall("s:url/s:loc", ns))
    assert locs == sorted(f"{SITE}/articles/a{i}" for i in range(30))
    assert all(m.text == "2026-03-01T09:30:15Z" for m in root.findall("s:url/s:lastmod", ns))
