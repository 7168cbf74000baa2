"""GET /users/<name>/articles?page=N&perPage=M: pages by number with the totals a numbered pager needs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import USER, ReadApi
from tests.kit.builders import article, at
from tests.kit.statements import count_statements

LIST = f"/users/{USER}/articles"
TOTALS = ("totalCount", "page", "perPage", "totalPages")


def seed(api: ReadApi, count: int, *, tags: tuple[str, ...] = ()) -> list[str]:
    """``count`` articles, 40 to a publication time; returns their slugs in read order."""
    for start in range(0, count, 40):
        batch = range(start, min(start + 40, count))
        api.add([article(f"a{i:03}", tags=tags) for i in batch], at(start))
    return [f"a{i:03}" for i in reversed(range(count))]


def page(api: ReadApi, **params: Any) -> dict[str, Any]:
    answer = api.get(LIST, query_string=params)
    assert answer.status_code == 200, answer.get_json()
    body: dict[str, Any] = answer.get_json()
    return body


def test_pages_by_number_cover_every_article_once_with_the_same_totals(api: ReadApi) -> None:
    expected = seed(api, 23)

    pages = [page(api, page=str(n), perPage="10") for n in (1, 2, 3)]

    assert [a["slug"] for p in pages for a in p["articles"]] == expected
    assert [[p[key] for key in TOTALS] for p in pages] == [[23, n, 10, 3] for n in (1, 2, 3)]
    assert set(pages[0]) == {"articles", *TOTALS}


def test_a_page_past_the_end_is_empty_with_the_right_totals(api: ReadApi) -> None:
    seed(api, 23)
    body = page(api, page="4", perPage="10")
    assert body == {"articles": [], "totalCount": 23, "page": 4, "perPage": 10, "totalPages": 3}


def test_a_blog_without_articles_has_zero_pages(api: ReadApi) -> None:
    assert page(api, page="1") == {"articles": [], "totalCount": 0, "page": 1, "perPage": 10, "totalPages": 0}


def test_page_defaults_to_1_and_per_page_to_10(api: ReadApi) -> None:
    expected = seed(api, 12)
    by_page = page(api, page="2")
    by_size = page(api, perPage="5")
    assert [a["slug"] for a in by_page["articles"]] == expected[10:]
    assert (by_page["perPage"], by_page["totalPages"]) == (10, 2)
    assert [a["slug"] for a in by_size["articles"]] == expected[:5]
    assert (by_size["page"], by_size["totalPages"]) == (1, 3)


def test_per_page_all_is_the_500_cap(api: ReadApi) -> None:
    expected = seed(api, 520)

    first = page(api, perPage="all")
    second = page(api, page="2", perPage="all")
    most = page(api, perPage="500")

    assert (first["perPage"], first["totalCount"], first["totalPages"]) == (500, 520, 2)
    assert [a["slug"] for a in first["articles"]] == expected[:500]
    assert [a["slug"] for a in second["articles"]] == expected[500:]
    assert most["articles"] == first["articles"]


@pytest.mark.parametrize(
    "params",
    [
        {"perPage": "0"},
        {"perPage": "501"},
        {"perPage": "abc"},
        {"perPage": ""},
        {"perPage": "-1"},
        {"perPage": "1.5"},
        {"perPage": "٣"},
        {"page": "0"},
        {"page": "abc"},
        {"page": ""},
        {"page": "99999999999999999999"},
    ],
)
def test_a_bad_page_or_per_page_is_a_400(api: ReadApi, params: dict[str, str]) -> None:
    answer = api.get(LIST, query_string=params)
    assert answer.status_code == 400, params
    assert answer.get_json()["error"] == "BAD_REQUEST"
    assert next(iter(params)) in answer.get_json()["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"page": "1", "limit": "10"},
        {"perPage": "10", "cursor": "abc"},
        {"page": "2", "perPage": "10", "limit": "10", "cursor": "x"},
    ],
)
def test_mixing_page_numbers_with_limit_or_cursor_is_a_400(api: ReadApi, params: dict[str, str]) -> None:
    seed(api, 3)
    answer = api.get(LIST, query_string=params)
    assert answer.status_code == 400
    assert answer.get_json()["error"] == "BAD_REQUEST"
    assert "limit and cursor" in answer.get_json()["message"]


def test_without_page_numbers_the_cursor_answer_is_unchanged(api: ReadApi) -> None:
    seed(api, 25)
    body = page(api)
    assert set(body) == {"articles", "nextCursor"}
    assert len(body["articles"]) == 20 and body["nextCursor"]


def test_an_unknown_user_is_a_404_by_number_too(api: ReadApi) -> None:
    answer = api.get("/users/nobody/articles", query_string={"page": "1"})
    assert answer.status_code == 404 and answer.get_json()["error"] == "NOT_FOUND"


@pytest.mark.parametrize("params", [{"page": "2", "perPage": "20"}, {"page": "900", "perPage": "all"}])
def test_a_page_with_its_totals_is_at_most_two_database_round_trips(
    api: ReadApi, params: dict[str, str]
) -> None:
    seed(api, 250, tags=("t",))
    with count_statements(api.db) as seen:
        body = page(api, tags="t,u", mode="or", **params)
    assert body["totalCount"] == 250
    assert seen.round_trips <= 2, seen.statements


def test_a_numbered_page_answers_etag_304_and_gzip(api: ReadApi) -> None:
    seed(api, 30)
    first = api.get(LIST, query_string={"page": "1", "perPage": "30"}, headers={"Accept-Encoding": "gzip"})
    assert first.status_code == 200
    assert first.headers["Content-Encoding"] == "gzip"
    assert first.headers["Cache-Control"].startswith("public")
    again = api.get(
        LIST, query_string={"page": "1", "perPage": "30"}, headers={"If-None-Match": first.headers["ETag"]}
    )
    assert again.status_code == 304
    other = api.get(LIST, query_string={"page": "2", "perPage": "30"})
    assert other.headers["ETag"] != first.headers["ETag"]
