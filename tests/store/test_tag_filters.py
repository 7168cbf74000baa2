"""Tag filters (``tags=a,b`` and ``mode``), pages by number with their totals, and the pairs the tag
facets are counted from: on SQLite and MariaDB, with what each costs in statements."""

from __future__ import annotations

import pytest

from function.store.facade import PeeweeStore
from function.store.records import ArticleView, UserRecord
from function.store.tag_filter import MAX_TAGS, TagFilter, TagFilterProblem
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.statements import count_statements


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.add_user("alice", "alice@example.com", 101)


def slugs(views: list[ArticleView] | None) -> list[str]:
    assert views is not None
    return sorted(v.slug for v in views)


def tags(*paths: str, mode: str = "and") -> TagFilter:
    found = TagFilter.of(paths, mode)
    assert found is not None
    return found


@pytest.fixture
def blog(store: PeeweeStore, user: UserRecord) -> PeeweeStore:
    apply_as_worker(
        store,
        user.id,
        [
            article("lambda-on-rust", tags=("tech/aws/lambda", "lang/rust")),
            article("s3-notes", tags=("tech/aws/s3",)),
            article("gcp-run", tags=("tech/gcp", "lang/rust")),
            article("awsome", tags=("tech/awsome",)),
            article("rust-only", tags=("Lang/Rust/Async",)),
            article("untagged"),
            article("draft-aws", tags=("tech/aws",), publish=False),
        ],
        [],
        T0,
    )
    return store


def test_or_keeps_articles_with_any_tag_or_a_tag_below_it(blog: PeeweeStore) -> None:
    listed = blog.published_articles("alice", tags=tags("tech/aws", "tech/gcp", mode="or"))
    assert slugs(listed) == ["gcp-run", "lambda-on-rust", "s3-notes"]


def test_and_keeps_articles_with_every_tag_each_matched_by_descendants(blog: PeeweeStore) -> None:
    listed = blog.published_articles("alice", tags=tags("tech", "lang/rust", mode="and"))
    assert slugs(listed) == ["gcp-run", "lambda-on-rust"]
    assert slugs(blog.published_articles("alice", tags=tags("tech/aws", "tech/gcp"))) == []


def test_a_filter_ignores_case_and_a_sibling_with_the_same_prefix(blog: PeeweeStore) -> None:
    assert slugs(blog.published_articles("alice", tags=tags("LANG/rust"))) == [
        "gcp-run",
        "lambda-on-rust",
        "rust-only",
    ]
    assert slugs(blog.published_articles("alice", tags=tags("tech/aws"))) == ["lambda-on-rust", "s3-notes"]


def test_a_filter_combines_with_the_one_tag_form_and_the_type(blog: PeeweeStore) -> None:
    assert slugs(blog.published_articles("alice", tag="lang", tags=tags("tech/aws"))) == ["lambda-on-rust"]
    assert slugs(blog.published_articles("alice", type="idea", tags=tags("tech"))) == []


def test_tags_hold_no_wildcards(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("a", tags=("100%/x",)), article("b", tags=("1000/x",))], [], T0)
    assert slugs(store.published_articles("alice", tags=tags("100%"))) == ["a"]
    assert slugs(store.published_articles("alice", tags=tags("10_0", "1%", mode="or"))) == []


def test_a_filter_is_normalised_and_bounded() -> None:
    assert TagFilter.of(["", " Tech/AWS/ ", "tech/aws", ",", "日本語"], "OR") == TagFilter(
        ("tech/aws", ",", "日本語"), "or"
    )
    assert TagFilter.of(["", "/"], "and") is None
    assert TagFilter.of([f"t{i}" for i in range(MAX_TAGS)]) is not None
    with pytest.raises(TagFilterProblem) as too_many:
        TagFilter.of([f"t{i}" for i in range(MAX_TAGS + 1)])
    assert too_many.value.parameter == "tags"
    with pytest.raises(TagFilterProblem) as bad_mode:
        TagFilter.of(["a"], "xor")
    assert bad_mode.value.parameter == "mode"


def test_numbered_pages_carry_the_total_and_cover_every_article_once(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article(f"a{i:02}", tags=("t",)) for i in range(23)], [], T0)
    apply_as_worker(store, user.id, [article("other")], [], at(60))

    pages = [store.reads.numbered_page("alice", page=n, per_page=10, tags=tags("t")) for n in (1, 2, 3, 4)]

    assert [p.total if p else None for p in pages] == [23, 23, 23, 23]
    assert [len(p.articles) if p else None for p in pages] == [10, 10, 3, 0]
    walked = [a.slug for p in pages if p for a in p.articles]
    assert walked == [f"a{i:02}" for i in reversed(range(23))]


def test_a_numbered_page_of_an_unknown_user_is_none_and_of_an_empty_blog_zero(
    store: PeeweeStore, user: UserRecord
) -> None:
    assert store.reads.numbered_page("nobody", page=1, per_page=10) is None
    empty = store.reads.numbered_page("alice", page=3, per_page=10)
    assert empty is not None and (empty.articles, empty.total) == ([], 0)


@pytest.mark.parametrize("page", [1, 40])  # a full page, and one past the end
def test_a_numbered_page_with_its_total_is_two_statements(
    store: PeeweeStore, user: UserRecord, page: int
) -> None:
    for start in range(0, 120, 40):
        batch = range(start, start + 40)
        apply_as_worker(store, user.id, [article(f"a{i:03}", tags=("t", f"t/{i}")) for i in batch], [], T0)

    with count_statements(store.db) as seen:
        found = store.reads.numbered_page("alice", page=page, per_page=50, tags=tags("t", "x", mode="or"))

    assert found is not None and found.total == 120
    assert len(found.articles) == (50 if page == 1 else 0)
    assert seen.round_trips == 2, seen.statements
    assert all("content_html" not in sql and "`content`" not in sql for sql in seen.statements)


def test_facet_tag_sets_are_one_statement_and_say_whether_the_user_exists(
    blog: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(blog, user.id, [article("gcp-again", tags=("tech/gcp", "lang/rust"))], [], T0)
    with count_statements(blog.db) as seen:
        sets = blog.reads.tag_facets("alice", tags=tags("lang/rust"))
    assert seen.round_trips == 1
    assert sets is not None
    assert sorted((sorted(paths), count) for paths, count in sets) == [
        (["Lang/Rust/Async"], 1),
        (["lang/rust", "tech/aws/lambda"], 1),
        (["lang/rust", "tech/gcp"], 2),
    ]
    assert blog.reads.tag_facets("nobody") is None
    blog.add_user("bob", "bob@example.com", 102)
    assert blog.reads.tag_facets("bob") == []
    assert blog.reads.tag_facets("alice", tags=tags("nothing/here")) == []


def test_article_cards_name_title_and_thumbnail_of_any_article_by_slug(
    blog: PeeweeStore, user: UserRecord
) -> None:
    cards = blog.reads.article_cards(user.id, ["s3-notes", "draft-aws", "missing"])
    assert sorted(cards) == ["draft-aws", "s3-notes"]
    assert (cards["s3-notes"].title, cards["s3-notes"].thumbnail) == ("Title of s3-notes", None)
