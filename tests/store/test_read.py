"""The read side of the HTTP routes: published articles, filters, order and the JSON shape."""

from __future__ import annotations

import re

import pytest

from function.api.serialise import article_json
from function.store.facade import PeeweeStore
from function.store.records import ArticleView, UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.statements import count_statements

ARTICLE_KEYS = {
    "articleId",
    "title",
    "slug",
    "content",
    "contentHtml",
    "toc",
    "description",
    "emoji",
    "type",
    "thumbnail",
    "ogpUrl",
    "tags",
    "publishedAt",
    "createdAt",
    "updatedAt",
}


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.add_user("alice", "alice@example.com", 101)


def slugs(views: list[ArticleView] | None) -> list[str] | None:
    return None if views is None else [v.slug for v in views]


def test_newest_published_first(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("old")], [], T0)
    apply_as_worker(store, user.id, [article("new")], [], at(60))
    apply_as_worker(store, user.id, [article("mid")], [], at(30))
    assert slugs(store.published_articles("alice")) == ["new", "mid", "old"]


def test_same_published_at_is_ordered_by_slug_descending(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("b"), article("c"), article("a"), article("B")], [], T0)
    assert slugs(store.published_articles("alice")) == ["c", "b", "a", "B"]


def test_a_scheduled_article_is_served_only_once_its_time_has_come(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article("now")], [], T0)
    apply_as_worker(store, user.id, [article("later")], [], at(3600))  # publishedAt an hour after T0

    assert slugs(store.published_articles("alice", now=at(10))) == ["now"]
    assert store.published_article("alice", "later", now=at(10)) is None
    page = store.published_page("alice", limit=10, now=at(10))
    assert page is not None and [a.slug for a in page.articles] == ["now"]

    assert slugs(store.published_articles("alice", now=at(3600))) == ["later", "now"]
    assert store.published_article("alice", "later", now=at(3600)) is not None


def test_drafts_are_not_listed_and_not_found(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("draft", publish=False), article("live")], [], T0)
    assert slugs(store.published_articles("alice")) == ["live"]
    assert store.published_article("alice", "draft") is None


def test_unpublished_article_disappears(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a")], [], T0)
    apply_as_worker(store, user.id, [article("a", publish=False)], [], at(1))
    assert slugs(store.published_articles("alice")) == []
    assert store.published_article("alice", "a") is None


def test_unknown_user_is_none_and_known_user_without_articles_is_empty(
    store: PeeweeStore, user: UserRecord
) -> None:
    assert store.published_articles("nobody") is None
    assert store.published_articles("alice") == []
    assert store.published_article("nobody", "a") is None


def test_type_filter(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("t", type="tech"), article("i", type="idea")], [], T0)
    assert slugs(store.published_articles("alice", type="idea")) == ["i"]
    assert slugs(store.published_articles("alice", type="Idea")) == ["i"]
    assert slugs(store.published_articles("alice", type="IDEA")) == ["i"]


def test_tag_filter_matches_the_tag_and_below(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(
        store,
        user.id,
        [
            article("exact", tags=("tech/aws",)),
            article("below", tags=("tech/aws/lambda",)),
            article("deeper", tags=("misc", "tech/aws/lambda/layers")),
            article("sibling", tags=("tech/awsome",)),
            article("parent", tags=("tech",)),
            article("dash", tags=("tech/aws-cdk",)),
        ],
        [],
        T0,
    )
    assert sorted(slugs(store.published_articles("alice", tag="tech/aws")) or []) == [
        "below",
        "deeper",
        "exact",
    ]
    assert sorted(slugs(store.published_articles("alice", tag="tech/aws/")) or []) == [
        "below",
        "deeper",
        "exact",
    ]


def test_tag_filter_has_no_wildcards(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(
        store, user.id, [article("a", tags=("tech/aws",)), article("b", tags=("tech_x",))], [], T0
    )
    assert slugs(store.published_articles("alice", tag="tech/%")) == []
    assert slugs(store.published_articles("alice", tag="tech_aws")) == []
    assert slugs(store.published_articles("alice", tag="tech/a_s")) == []
    assert slugs(store.published_articles("alice", tag="tech_x")) == ["b"]


def test_tag_filter_ignores_case_and_tags_are_served_as_written(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(
        store, user.id, [article("a", tags=("Tech/AWS",)), article("b", tags=("techno",))], [], T0
    )
    assert slugs(store.published_articles("alice", tag="tech/aws")) == ["a"]
    assert slugs(store.published_articles("alice", tag="TECH")) == ["a"]
    listed = store.published_articles("alice", tag="tech")
    assert listed is not None and listed[0].tags == ("Tech/AWS",)


def test_tag_and_type_filters_combine(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(
        store,
        user.id,
        [article("a", tags=("x",), type="tech"), article("b", tags=("x",), type="idea")],
        [],
        T0,
    )
    assert slugs(store.published_articles("alice", type="idea", tag="x")) == ["b"]


def test_filtered_articles_carry_all_their_tags(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", tags=("x/y", "b", "x"))], [], T0)
    listed = store.published_articles("alice", tag="x/y")
    assert listed is not None and listed[0].tags == ("b", "x", "x/y")


def test_article_json_has_exactly_the_contract_keys(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", tags=("z", "a/b"), body="# Hi")], [], T0)
    view = store.published_article("alice", "a")
    assert view is not None

    data = article_json(view)

    assert set(data) == ARTICLE_KEYS
    assert data["articleId"] == str(view.id)
    assert data["tags"] == ["a/b", "z"]
    assert data["content"] == "# Hi"
    assert data["contentHtml"] == "<p># Hi</p>"
    iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
    for key in ("publishedAt", "createdAt", "updatedAt"):
        assert iso.match(data[key]), data[key]
    assert data["publishedAt"] == "2026-03-01T09:30:15.123456Z"


@pytest.mark.parametrize("count", [3, 40])
def test_listing_costs_two_statements_whatever_the_count(
    store: PeeweeStore, user: UserRecord, count: int
) -> None:
    apply_as_worker(store, user.id, [article(f"a{i}", tags=("t", f"t/{i}")) for i in range(count)], [], T0)

    with count_statements(store.db) as seen:
        listed = store.published_articles("alice", tag="t")

    assert listed is not None and len(listed) == count
    assert seen.count == 2


@pytest.mark.parametrize("count", [30, 150])
def test_a_page_costs_two_statements_whatever_the_count(
    store: PeeweeStore, user: UserRecord, count: int
) -> None:
    for start in range(0, count, 50):  # one apply of 150 tagged articles overflows SQLite's parser
        batch = range(start, min(start + 50, count))
        apply_as_worker(store, user.id, [article(f"a{i:03}", tags=("t", f"t/{i}")) for i in batch], [], T0)
    first = store.published_page("alice", limit=20, tag="t")
    assert first is not None and first.next_key is not None

    with count_statements(store.db) as seen:
        page = store.published_page("alice", limit=20, tag="t", after=first.next_key)

    assert page is not None and len(page.articles) == min(20, count - 20)
    assert seen.count == 2


def test_pages_carry_no_bodies(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", body="x" * 10_000)], [], T0)
    page = store.published_page("alice", limit=5)
    assert page is not None and page.next_key is None
    assert (page.articles[0].content, page.articles[0].content_html) == ("", "")


def test_one_article_costs_two_statements(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", tags=("t",))], [], T0)
    with count_statements(store.db) as seen:
        assert store.published_article("alice", "a") is not None
    assert seen.count == 2
