"""``tags=a,b`` and ``mode=and|or`` on the list, the tag facets and the feed; the facets' counts against a
brute-force count over generated blogs."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import feedparser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.api.conftest import USER, ReadApi
from tests.kit.builders import T0, article, at

LIST = f"/users/{USER}/articles"
FACETS = f"/users/{USER}/articles/tag-facets"


def encoded(*tags: str) -> str:
    """``tags=`` as a browser's front end writes it: each tag URL-encoded, joined by raw commas."""
    return ",".join(quote(tag, safe="") for tag in tags)


def listed(api: ReadApi, query: str) -> list[str]:
    answer = api.get(f"{LIST}?{query}")
    assert answer.status_code == 200, answer.get_json()
    return sorted(a["slug"] for a in answer.get_json()["articles"])


@pytest.fixture
def blog(api: ReadApi) -> ReadApi:
    api.add(
        [
            article("lambda", tags=("tech/aws/lambda", "lang/rust")),
            article("s3", tags=("tech/aws/s3",)),
            article("gcp", tags=("tech/gcp", "lang/rust")),
            article("awsome", tags=("tech/awsome",)),
            article("spaced", tags=("machine learning/basics",)),
            article("japanese", tags=("言語/日本語", "tech/aws")),
            article("draft", tags=("tech/aws",), publish=False),
        ],
        T0,
    )
    return api


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"tags={encoded('tech/aws', 'tech/gcp')}&mode=or", ["gcp", "japanese", "lambda", "s3"]),
        (f"tags={encoded('tech', 'lang/rust')}&mode=and", ["gcp", "lambda"]),
        (f"tags={encoded('tech/aws', 'tech/gcp')}&mode=and", []),
        (f"tags={encoded('TECH/AWS')}", ["japanese", "lambda", "s3"]),
        (f"tags={encoded('tech/aws')},,&mode=or", ["japanese", "lambda", "s3"]),
        (f"tags={encoded('machine learning')}", ["spaced"]),
        (f"tags={encoded('言語')}", ["japanese"]),
        (f"tags={encoded('言語/日本語', 'tech/aws/s3')}&mode=or", ["japanese", "s3"]),
        ("tags=tech/aws,lang&mode=and", ["lambda"]),  # unencoded slashes read the same
        ("tags=machine+learning", ["spaced"]),  # a form's "+" for the space
        ("tags=&mode=and", ["awsome", "gcp", "japanese", "lambda", "s3", "spaced"]),
        (f"tag=tech&tags={encoded('lang/rust')}", ["gcp", "lambda"]),
    ],
)
def test_the_list_keeps_what_tags_and_mode_ask_for(blog: ReadApi, query: str, expected: list[str]) -> None:
    assert listed(blog, query) == expected
    assert listed(blog, f"{query}&page=1&perPage=all") == expected


def test_the_default_mode_is_and(blog: ReadApi) -> None:
    assert listed(blog, f"tags={encoded('tech', 'lang')}") == ["gcp", "lambda"]


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("tags=a&mode=xor", "'mode'"),
        ("tags=" + ",".join(f"t{i}" for i in range(21)), "20 tags"),
        ("tags=" + "x" * 256, "255 characters"),
        ("mode=any", "'mode'"),
    ],
)
def test_a_bad_tag_filter_is_a_400_on_every_route(blog: ReadApi, query: str, word: str) -> None:
    for path in (LIST, FACETS, f"/users/{USER}/feed.xml", f"{LIST}?page=1"):
        answer = blog.get(f"{path}{'&' if '?' in path else '?'}{query}")
        assert answer.status_code == 400, path
        assert answer.get_json()["error"] == "BAD_REQUEST"
        assert word in answer.get_json()["message"]


def test_twenty_tags_are_allowed(blog: ReadApi) -> None:
    query = "tags=" + ",".join(["tech/aws/s3", *(f"t{i}" for i in range(19))]) + "&mode=or"
    assert listed(blog, query) == ["s3"]


def test_twenty_tags_of_the_longest_path_fit_in_the_parameter(blog: ReadApi) -> None:
    longest = [f"{i:02}" + "x" * 253 for i in range(20)]
    answer = blog.get(LIST, query_string={"tags": ",".join(longest), "mode": "or"})
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["articles"] == []


def test_a_cursor_walk_keeps_its_tag_filter_and_refuses_another(blog: ReadApi) -> None:
    query = {"tags": "tech/aws,tech/gcp", "mode": "or", "limit": "2"}
    first = blog.get(LIST, query_string=query).get_json()
    rest = blog.get(LIST, query_string={**query, "cursor": first["nextCursor"]}).get_json()
    assert sorted(a["slug"] for a in first["articles"] + rest["articles"]) == [
        "gcp",
        "japanese",
        "lambda",
        "s3",
    ]
    other = blog.get(LIST, query_string={**query, "mode": "and", "cursor": first["nextCursor"]})
    assert other.status_code == 400


def test_facets_count_each_path_and_its_parents_largest_first(blog: ReadApi) -> None:
    answer = blog.get(FACETS)
    assert answer.status_code == 200
    assert answer.get_json() == {
        "facets": [
            {"path": "tech", "count": 5},
            {"path": "tech/aws", "count": 3},
            {"path": "lang", "count": 2},
            {"path": "lang/rust", "count": 2},
            {"path": "machine learning", "count": 1},
            {"path": "machine learning/basics", "count": 1},
            {"path": "tech/aws/lambda", "count": 1},
            {"path": "tech/aws/s3", "count": 1},
            {"path": "tech/awsome", "count": 1},
            {"path": "tech/gcp", "count": 1},
            {"path": "言語", "count": 1},
            {"path": "言語/日本語", "count": 1},
        ]
    }


def test_facets_are_counted_over_the_filtered_articles(blog: ReadApi) -> None:
    answer = blog.get(f"{FACETS}?tags={encoded('lang/rust')}&mode=or")
    assert answer.get_json()["facets"] == [
        {"path": "lang", "count": 2},
        {"path": "lang/rust", "count": 2},
        {"path": "tech", "count": 2},
        {"path": "tech/aws", "count": 1},
        {"path": "tech/aws/lambda", "count": 1},
        {"path": "tech/gcp", "count": 1},
    ]
    assert blog.get(f"{FACETS}?tags=nothing").get_json() == {"facets": []}


def test_facets_of_an_unknown_user_are_a_404(blog: ReadApi) -> None:
    answer = blog.get("/users/nobody/articles/tag-facets")
    assert answer.status_code == 404 and answer.get_json()["error"] == "NOT_FOUND"
    assert blog.get("/users/bob/articles/tag-facets").get_json() == {"facets": []}


def test_the_facets_route_wins_over_an_article_with_that_slug(blog: ReadApi) -> None:
    blog.add([article("tag-facets", tags=("x",))], at(60))
    answer = blog.get(FACETS)
    assert answer.status_code == 200 and "facets" in answer.get_json()
    assert {"path": "x", "count": 1} in answer.get_json()["facets"]
    assert blog.get(f"{LIST}/tag-facetsx").status_code == 404


def test_facets_are_one_database_round_trip(blog: ReadApi) -> None:
    from tests.kit.statements import count_statements

    with count_statements(blog.db) as seen:
        answer = blog.get(f"{FACETS}?tags=tech,lang&mode=or")
    assert answer.status_code == 200
    assert seen.round_trips == 1, seen.statements


def test_facets_answer_etag_304_and_cache_control(blog: ReadApi) -> None:
    first = blog.get(FACETS)
    assert first.headers["Cache-Control"].startswith("public")
    assert blog.get(FACETS, headers={"If-None-Match": first.headers["ETag"]}).status_code == 304


def test_the_feed_keeps_what_tags_and_mode_ask_for_and_names_the_filter(blog: ReadApi) -> None:
    answer = blog.get(f"/users/{USER}/feed.xml?tags={encoded('tech/aws', 'lang')}&mode=or")
    assert answer.status_code == 200
    feed = feedparser.parse(answer.data)
    assert sorted(e.title for e in feed.entries) == [
        "Title of gcp",
        "Title of japanese",
        "Title of lambda",
        "Title of s3",
    ]
    assert feed.feed.id.endswith("/feed.xml?tags=tech%2Faws%2Clang&mode=or")
    unfiltered = feedparser.parse(blog.get(f"/users/{USER}/feed.xml").data)
    assert len(unfiltered.entries) == 6 and unfiltered.feed.id.endswith("/feed.xml")


# --- the facets against a brute-force count ---------------------------------------------------------

PATHS = ["a", "a/b", "a/b/c", "a/B", "a/d", "e", "e/f", "g/h/i", "A", "日本/語"]


def brute_force_facets(
    articles: Iterable[tuple[bool, tuple[str, ...]]], wanted: list[str], mode: str
) -> list[dict[str, Any]]:
    """Every path and parent of a tag of a published article the filter keeps, with how many such
    articles have it or a tag below it; largest first, then by path."""

    def has(tags: tuple[str, ...], want: str) -> bool:
        want = want.lower()
        return any(t.lower() == want or t.lower().startswith(want + "/") for t in tags)

    counts: dict[str, int] = {}
    for published, tags in articles:
        kept = not wanted or (all if mode == "and" else any)(has(tags, w) for w in wanted)
        if not (published and kept):
            continue
        paths = {"/".join(t.split("/")[:depth]) for t in tags for depth in range(1, t.count("/") + 2)}
        for path in paths:
            counts[path] = counts.get(path, 0) + 1
    return [{"path": p, "count": counts[p]} for p in sorted(counts, key=lambda p: (-counts[p], p))]


blogs = st.lists(
    st.tuples(st.booleans(), st.sets(st.sampled_from(PATHS), max_size=4)),
    max_size=12,
)
_users = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    articles=blogs,
    wanted=st.lists(st.sampled_from(["a", "A/b", "e", "a/b/c", "g", "日本", "x"]), max_size=3),
    mode=st.sampled_from(["and", "or"]),
)
def test_facets_match_a_brute_force_count(
    api: ReadApi, articles: list[tuple[bool, set[str]]], wanted: list[str], mode: str
) -> None:
    # GIVEN a new user per example (the database lives for the whole test)
    name = f"u{next(_users)}"
    with connection(api.db):
        api.user_ids[name] = PeeweeStore(api.db).add_user(name, f"{name}@example.com", None).id
    generated = [(published, tuple(sorted(tags))) for published, tags in articles]
    api.add(
        [article(f"p{i}", tags=tags, publish=published) for i, (published, tags) in enumerate(generated)],
        T0,
        user=name,
    )
    # WHEN the facets are asked for with the filter
    query = f"?tags={encoded(*wanted)}&mode={mode}" if wanted else ""
    answer = api.get(f"/users/{name}/articles/tag-facets{query}")
    # THEN they are the brute-force count
    assert answer.status_code == 200
    assert answer.get_json()["facets"] == brute_force_facets(generated, wanted, mode)
