"""GET /users/<name>/articles: summaries a page at a time, on a cursor only the server can make."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from function.api.serialise import article_json
from function.store.records import ArticleView
from tests.api.conftest import USER, ReadApi
from tests.kit.builders import T0, article, at
from tests.kit.statements import count_statements

LIST = f"/users/{USER}/articles"
SUMMARY_KEYS = set(article_json(ArticleView(1, "s", "t", "", "", None, None, None, (), T0, T0, T0))) - {
    "content",
    "contentHtml",
    "toc",
}


def all_pages(api: ReadApi, **params: Any) -> list[list[dict[str, Any]]]:
    pages, cursor = [], None
    while True:
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        answer = api.get(LIST, query_string=query)
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        pages.append(body["articles"])
        cursor = body["nextCursor"]
        if cursor is None:
            return pages


def seed(api: ReadApi, count: int) -> list[str]:
    """``count`` articles, three to a publication time; returns their slugs in read order."""
    for start in range(0, count, 3):
        api.add([article(f"a{i:03}") for i in range(start, min(start + 3, count))], at(start))
    return [f"a{i:03}" for i in reversed(range(count))]


def test_following_next_cursor_gives_every_article_once_newest_first(api: ReadApi) -> None:
    expected = seed(api, 47)

    pages = all_pages(api)

    assert [len(page) for page in pages] == [20, 20, 7]
    assert [a["slug"] for page in pages for a in page] == expected


def test_a_page_is_summaries_without_the_bodies(api: ReadApi) -> None:
    api.add([article("big", body="x" * 50_000, tags=("tech",))], T0)
    answer = api.get(LIST)
    (summary,) = answer.get_json()["articles"]
    assert set(summary) == SUMMARY_KEYS
    assert summary["slug"] == "big" and summary["tags"] == ["tech"]
    assert len(answer.data) < 2000
    assert answer.get_json()["nextCursor"] is None


def test_ties_are_ordered_by_slug_descending(api: ReadApi) -> None:
    api.add([article("b"), article("a"), article("c")], T0)
    api.add([article("z")], at(-60))
    slugs = [a["slug"] for page in all_pages(api, limit="2") for a in page]
    assert slugs == ["c", "b", "a", "z"]


def test_pages_stay_stable_while_articles_are_added(api: ReadApi) -> None:
    expected = seed(api, 10)
    first = api.get(LIST, query_string={"limit": "4"}).get_json()
    api.add([article("newer")], at(1000))  # lands before the first page, not in the next ones
    rest = all_pages(api, limit="4", cursor=first["nextCursor"])
    assert [a["slug"] for a in first["articles"]] + [a["slug"] for p in rest for a in p] == expected


@pytest.mark.parametrize("limit", ["0", "101", "abc", "-1", "1.5", "", " 5", "٣"])
def test_a_bad_limit_is_a_400(api: ReadApi, limit: str) -> None:
    answer = api.get(LIST, query_string={"limit": limit})
    assert answer.status_code == 400, limit
    assert answer.get_json()["error"] == "BAD_REQUEST"


@pytest.mark.parametrize("limit", ["1", "100"])
def test_limits_at_the_bounds_are_served(api: ReadApi, limit: str) -> None:
    seed(api, 3)
    answer = api.get(LIST, query_string={"limit": limit})
    assert answer.status_code == 200
    assert len(answer.get_json()["articles"]) == min(int(limit), 3)


def _cursor(api: ReadApi, **params: str) -> str:
    cursor: str = api.get(LIST, query_string={"limit": "1", **params}).get_json()["nextCursor"]
    assert cursor
    return cursor


def test_a_tampered_cursor_is_a_400(api: ReadApi) -> None:
    seed(api, 3)
    cursor = _cursor(api)
    data, signature = cursor.split(".")
    payload = base64.urlsafe_b64decode(data + "==").replace(b"a002", b"a009")
    forged = base64.urlsafe_b64encode(payload).rstrip(b"=").decode() + "." + signature
    for bad in (forged, cursor[:-2], "nonsense", "é.é", cursor + "x" * 3000):
        answer = api.get(LIST, query_string={"cursor": bad})
        assert answer.status_code == 400, bad
        assert answer.get_json()["error"] == "BAD_REQUEST"


def test_a_cursor_for_another_user_or_filter_is_a_400(api: ReadApi) -> None:
    seed(api, 3)
    api.add([article("b1"), article("b2")], T0, user="bob")
    cursor = _cursor(api)
    assert api.get("/users/bob/articles", query_string={"cursor": cursor}).status_code == 400
    assert api.get(LIST, query_string={"cursor": cursor, "type": "tech"}).status_code == 400
    assert api.get(LIST, query_string={"cursor": cursor, "tag": "x"}).status_code == 400
    assert api.get(LIST, query_string={"cursor": cursor}).status_code == 200


def test_a_cursor_works_whatever_the_case_of_the_filter(api: ReadApi) -> None:
    api.add([article(f"a{i}", type="Tech", tags=("AWS/Lambda",)) for i in range(3)], T0)
    cursor = _cursor(api, type="tech", tag="aws")
    answer = api.get(LIST, query_string={"cursor": cursor, "type": "TECH", "tag": "Aws", "limit": "5"})
    assert [a["slug"] for a in answer.get_json()["articles"]] == ["a1", "a0"]
    assert answer.get_json()["articles"][0]["tags"] == ["AWS/Lambda"]
    assert answer.get_json()["articles"][0]["type"] == "Tech"


def test_unknown_user_is_a_404(api: ReadApi) -> None:
    answer = api.get("/users/nobody/articles")
    assert answer.status_code == 404 and answer.get_json()["error"] == "NOT_FOUND"


@pytest.mark.parametrize("count", [25, 250])
def test_a_page_is_at_most_two_database_round_trips(api: ReadApi, count: int) -> None:
    for start in range(0, count, 40):
        api.add([article(f"a{i:03}", tags=("t",)) for i in range(start, min(start + 40, count))], at(start))
    cursor = _cursor(api, tag="t")
    with count_statements(api.db) as seen:
        answer = api.get(LIST, query_string={"cursor": cursor, "tag": "t"})
    assert answer.status_code == 200 and len(answer.get_json()["articles"]) == 20
    assert seen.round_trips <= 2, seen.statements


def test_a_scheduled_article_appears_when_due_and_changes_the_etag(api: ReadApi) -> None:
    import time
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC).replace(tzinfo=None)
    api.add([article("old")], now - timedelta(days=1))
    api.add([article("soon")], now + timedelta(seconds=1.5))
    before = api.get(LIST)
    assert [a["slug"] for a in before.get_json()["articles"]] == ["old"]
    assert api.get(f"/users/{USER}/articles/soon").status_code == 404

    time.sleep(
        max(0.0, (now + timedelta(seconds=1.6) - datetime.now(UTC).replace(tzinfo=None)).total_seconds())
    )

    after = api.get(LIST, headers={"If-None-Match": before.headers["ETag"]})
    assert after.status_code == 200
    assert [a["slug"] for a in after.get_json()["articles"]] == ["soon", "old"]
    assert after.headers["ETag"] != before.headers["ETag"]
    assert api.get(f"/users/{USER}/articles/soon").status_code == 200
