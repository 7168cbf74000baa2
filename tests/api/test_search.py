"""``GET /users/<name>/articles/search``: lexical search on SQLite and MariaDB, its parameters and
errors, the tag filter, caching and CORS as the list has them, and the semantic and hybrid modes
through the search port with a hand-written fake provider."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from function.app import create_app
from function.services import Services
from function.settings import Settings
from function.store.facade import PeeweeStore
from tests.api.conftest import ORIGIN, SITE, USER, ReadApi
from tests.kit.builders import T0, article, at
from tests.kit.deliveries import SECRET

SEARCH = f"/users/{USER}/articles/search"
SUMMARY_KEYS = {
    "articleId",
    "title",
    "slug",
    "description",
    "type",
    "thumbnail",
    "emoji",
    "tags",
    "publishedAt",
    "createdAt",
    "updatedAt",
    "ogpUrl",
}


@pytest.fixture
def blog(api: ReadApi) -> ReadApi:
    api.add(
        [
            article(
                "lambda-cold-start",
                title="AWS Lambdaのコールドスタートを短縮する",
                tags=("tech/aws/lambda",),
                body="SnapStartを有効にすると初期化が速くなります。Lambdaの設定を確認します。",
            ),
            article(
                "tidb-vectors",
                title="TiDBのベクトル検索",
                tags=("tech/database",),
                body="HNSWインデックスとLambdaから接続する方法。",
            ),
            article("rust-runtime", title="The Tokio runtime", tags=("lang/rust",), body="Tasks and Lambda."),
            article("draft", title="Lambda draft", body="Lambda Lambda Lambda", publish=False),
        ],
        T0,
    )
    return api


def ok(api: ReadApi, query: str, **kwargs: Any) -> dict[str, Any]:
    answer = api.get(f"{SEARCH}?{query}", **kwargs)
    assert answer.status_code == 200, answer.get_json()
    body: dict[str, Any] = answer.get_json()
    return body


def slugs(body: dict[str, Any]) -> list[str]:
    return [a["slug"] for a in body["articles"]]


def test_a_lexical_search_answers_summaries_with_distances_closest_first(blog: ReadApi) -> None:
    body = ok(blog, "q=%20%20コールドスタート%20")
    assert slugs(body) == ["lambda-cold-start"]
    found = body["articles"][0]
    assert set(found) == SUMMARY_KEYS | {"distance"}
    assert found["tags"] == ["tech/aws/lambda"]
    assert 0 < found["distance"] < 1
    assert body["query"] == "コールドスタート"
    assert (body["limit"], body["offset"], body["totalCount"]) == (20, 0, 1)


def test_every_match_once_by_distance_and_no_draft(blog: ReadApi) -> None:
    body = ok(blog, "q=lambda")
    assert sorted(slugs(body)) == ["lambda-cold-start", "rust-runtime", "tidb-vectors"]
    distances = [a["distance"] for a in body["articles"]]
    assert distances == sorted(distances)
    assert slugs(body)[0] == "lambda-cold-start"  # in its title and a tag
    assert body["totalCount"] == 3


def test_limit_and_offset_page_through_the_matches(blog: ReadApi) -> None:
    everything = slugs(ok(blog, "q=lambda"))
    page = ok(blog, "q=lambda&limit=1&offset=1")
    assert slugs(page) == everything[1:2]
    assert (page["limit"], page["offset"], page["totalCount"]) == (1, 1, 3)
    assert ok(blog, "q=lambda&offset=200")["articles"] == []


def test_the_list_tag_filter_applies(blog: ReadApi) -> None:
    assert slugs(ok(blog, "q=lambda&tags=tech")) == ["lambda-cold-start", "tidb-vectors"]
    assert sorted(slugs(ok(blog, "q=lambda&tags=lang/rust,tech/database&mode=or"))) == [
        "rust-runtime",
        "tidb-vectors",
    ]
    assert ok(blog, "q=lambda&tags=tech,lang&mode=and")["totalCount"] == 0


def test_a_query_of_no_words_matches_nothing(blog: ReadApi) -> None:
    body = ok(blog, "q=%21%3F%21")
    assert body["articles"] == [] and body["totalCount"] == 0


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("", "'q'"),
        ("q=", "'q'"),
        ("q=%20%20%20", "'q'"),
        ("q=" + "a" * 501, "'q'"),
        ("q=x&limit=0", "'limit'"),
        ("q=x&limit=101", "'limit'"),
        ("q=x&limit=ten", "'limit'"),
        ("q=x&offset=201", "'offset'"),
        ("q=x&offset=-1", "'offset'"),
        ("q=x&searchMode=fuzzy", "'searchMode'"),
        ("q=x&mode=xor&tags=a", "'mode'"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(blog: ReadApi, query: str, names: str) -> None:
    answer = blog.get(f"{SEARCH}?{query}")
    assert answer.status_code == 400
    body = answer.get_json()
    assert body["error"] == "BAD_REQUEST"
    assert names in body["message"]


def test_a_query_of_500_characters_is_accepted(blog: ReadApi) -> None:
    assert ok(blog, "q=" + "あ" * 500)["totalCount"] == 0


@pytest.mark.parametrize("mode", ["semantic", "hybrid", "SEMANTIC"])
def test_semantic_modes_without_a_provider_are_a_503(blog: ReadApi, mode: str) -> None:
    answer = blog.get(f"{SEARCH}?q=lambda&searchMode={mode}")
    assert answer.status_code == 503
    body = answer.get_json()
    assert body["error"] == "SEARCH_UNAVAILABLE"
    assert "EMBEDDING_PROVIDER" in body["message"]


def test_without_a_provider_the_default_and_lexical_modes_agree(blog: ReadApi) -> None:
    assert ok(blog, "q=lambda") == ok(blog, "q=lambda&searchMode=lexical")


def test_an_unknown_user_is_a_404(blog: ReadApi) -> None:
    answer = blog.get("/users/nobody/articles/search?q=lambda")
    assert answer.status_code == 404
    assert answer.get_json()["error"] == "NOT_FOUND"


def test_the_routes_win_over_articles_named_like_them(api: ReadApi) -> None:
    api.add([article("search", title="Search me"), article("tag-facets", title="Facets")], T0)
    assert api.get(f"/users/{USER}/articles/search").get_json()["error"] == "BAD_REQUEST"  # no q
    assert slugs(ok(api, "q=search")) == ["search"]
    assert "facets" in api.get(f"/users/{USER}/articles/tag-facets").get_json()


def test_the_answer_revalidates_and_changes_when_a_sync_changes_the_articles(blog: ReadApi) -> None:
    first = blog.get(f"{SEARCH}?q=HNSW")
    etag = first.headers["ETag"]
    assert blog.get(f"{SEARCH}?q=HNSW", headers={"If-None-Match": etag}).status_code == 304
    blog.add(
        [article("tidb-vectors", title="TiDBのベクトル検索", tags=("tech/database",), body="IVF only.")],
        at(60),
    )
    again = blog.get(f"{SEARCH}?q=HNSW", headers={"If-None-Match": etag})
    assert again.status_code == 200
    assert again.get_json()["articles"] == []


def test_cors_as_the_list(make_api: Callable[..., ReadApi]) -> None:
    api = make_api(cors_allowed_origins=(ORIGIN,))
    answer = api.get(f"{SEARCH}?q=x", headers={"Origin": ORIGIN})
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert (
        "Access-Control-Allow-Origin"
        not in api.get(f"{SEARCH}?q=x", headers={"Origin": "https://x.example"}).headers
    )


class NearestByTable:
    """A semantic provider that answers from a table the test writes: query → (slug, distance)."""

    def __init__(
        self, store_of: Callable[[], PeeweeStore], table: dict[str, list[tuple[str, float]]]
    ) -> None:
        self._store_of = store_of
        self._table = table
        self.calls: list[tuple[int, str, int]] = []

    def search(self, user_id: int, query: str, limit: int) -> list[tuple[int, float]]:
        self.calls.append((user_id, query, limit))
        store = self._store_of()
        index = store.reconcile.load_index(user_id)
        return [(index[slug].id, d) for slug, d in self._table.get(query, [])][:limit]


def with_semantic(
    api: ReadApi, db_url: str, table: dict[str, list[tuple[str, float]]]
) -> tuple[ReadApi, NearestByTable]:
    fake = NearestByTable(lambda: PeeweeStore(api.db), table)
    settings = Settings(
        webhook_secret=SECRET,
        database_url=db_url,
        lambda_function_name="d-st-blog-api",
        article_source="dir:/nonexistent",
        site_url=SITE,
    )
    app = create_app(services=Services(settings, database=api.db, semantic_search=fake))
    return ReadApi(api.db, app, api.user_ids), fake


def test_semantic_mode_answers_the_providers_order_and_distances_published_only(
    blog: ReadApi, db_url: str
) -> None:
    nearest = [("draft", 0.05), ("rust-runtime", 0.1), ("tidb-vectors", 0.3)]
    api, fake = with_semantic(blog, db_url, {"serverless": nearest})
    body = ok(api, "q=serverless&searchMode=semantic")
    assert [(a["slug"], a["distance"]) for a in body["articles"]] == [
        ("rust-runtime", 0.1),
        ("tidb-vectors", 0.3),
    ]
    assert body["totalCount"] == 2
    assert fake.calls == [(blog.user_ids[USER], "serverless", 300)]


def test_hybrid_is_the_default_with_a_provider_and_fuses_both_rankings(blog: ReadApi, db_url: str) -> None:
    nearest = [("tidb-vectors", 0.1), ("rust-runtime", 0.2), ("lambda-cold-start", 0.4)]
    api, _ = with_semantic(blog, db_url, {"lambda": nearest})
    lexical = slugs(ok(api, "q=lambda&searchMode=lexical"))
    semantic = [slug for slug, _ in nearest]
    # Reciprocal rank fusion by hand: 1/(60 + rank) from each ranking, ranks from 1.
    fused = {
        slug: 1 / (60 + lexical.index(slug) + 1) + 1 / (60 + semantic.index(slug) + 1) for slug in lexical
    }
    expected = sorted(fused, key=lambda slug: -fused[slug])

    body = ok(api, "q=lambda")
    assert body == ok(api, "q=lambda&searchMode=hybrid")
    assert slugs(body) == expected
    assert [a["distance"] for a in body["articles"]] == pytest.approx([1 / (1 + fused[s]) for s in expected])
    assert body["totalCount"] == 3
