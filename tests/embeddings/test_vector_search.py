"""Exact cosine search: each article once, by its closest chunk, closest first; the user's vectors cached
by the process until they change; a query the provider cannot embed is one typed error."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from function.embeddings.http_json import HttpClients
from function.embeddings.refresh import VectorRefresh
from function.embeddings.service import ServiceEmbeddings
from function.embeddings.vector_search import ExactSemanticSearch, VectorCache, build_index, closest
from function.errors import EmbeddingFailed
from function.store.embeddings import EmbeddingQueries, UserVectors
from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.embedding_standin import EmbeddingStandIn


def index_of(ids: list[int], rows: list[list[float]]) -> object:
    vectors = UserVectors(np.array(ids, dtype=np.int64), np.array(rows, dtype=np.float32))
    return build_index(vectors, (len(ids), sum(ids), ""))


def test_an_article_is_ranked_by_its_closest_chunk_and_appears_once() -> None:
    index = index_of([1, 1, 2, 3], [[1, 0], [0, 1], [0.6, 0.8], [-1, 0]])

    found = closest(index, np.array([0, 2], dtype=np.float32), 10)  # type: ignore[arg-type]

    assert [article_id for article_id, _ in found] == [1, 2, 3]
    assert found[0][1] == pytest.approx(0.0, abs=1e-6)  # article 1's second chunk points the same way
    assert found[1][1] == pytest.approx(0.2, abs=1e-6)
    assert found[2][1] == pytest.approx(1.0, abs=1e-6)


def test_the_limit_keeps_the_closest() -> None:
    index = index_of([1, 2, 3], [[1, 0], [0.8, 0.6], [0, 1]])

    assert [i for i, _ in closest(index, np.array([1, 0], dtype=np.float32), 2)] == [1, 2]  # type: ignore[arg-type]


def test_equal_distances_are_ordered_by_article_id() -> None:
    index = index_of([7, 3, 5], [[1, 0], [1, 0], [1, 0]])

    assert [i for i, _ in closest(index, np.array([1, 0], dtype=np.float32), 3)] == [3, 5, 7]  # type: ignore[arg-type]


def test_a_query_of_another_dimension_finds_nothing() -> None:
    index = index_of([1], [[1, 0]])

    assert closest(index, np.array([1, 0, 0], dtype=np.float32), 5) == []  # type: ignore[arg-type]


CORPUS = {
    "tidb": ("TiDB Serverless に Lambda から接続する", "TLS の設定と接続プールの話。"),
    "react": ("React hooks in practice", "useEffect and useMemo explained with examples."),
    "pulumi": ("Pulumi で AWS を組み立てる", "Python で書くインフラ。スタックと設定。"),
}


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


@pytest.fixture
def provider(standin: EmbeddingStandIn, quick_http: HttpClients) -> ServiceEmbeddings:
    return ServiceEmbeddings(standin.url, quick_http)


@pytest.fixture
def embedded(store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings) -> Iterator[dict[str, int]]:
    articles = [article(slug, title=title, body=body) for slug, (title, body) in CORPUS.items()]
    apply_as_worker(store, user.id, articles, [], T0)
    VectorRefresh(provider, EmbeddingQueries(store.session), lambda: T0).run(user.id)
    yield {slug: stored.id for slug, stored in store.reconcile.load_index(user.id).items()}


def test_a_query_finds_the_article_that_holds_its_words_first(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, embedded: dict[str, int]
) -> None:
    search = ExactSemanticSearch(provider, EmbeddingQueries(store.session), VectorCache())

    assert search.search(user.id, "useEffect useMemo", 3)[0][0] == embedded["react"]
    assert search.search(user.id, "Lambda から TiDB に接続", 3)[0][0] == embedded["tidb"]
    distances = [distance for _, distance in search.search(user.id, "Pulumi スタック", 3)]
    assert distances == sorted(distances) and len(distances) == 3


def test_the_vectors_are_read_once_until_they_change(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, embedded: dict[str, int]
) -> None:
    cache = VectorCache()
    search = ExactSemanticSearch(provider, EmbeddingQueries(store.session), cache)
    search.search(user.id, "React", 3)
    search.search(user.id, "TiDB", 3)
    assert cache.loads == 1

    # WHEN a sync archives an article, THEN the next search reads the vectors again, without it
    apply_as_worker(store, user.id, [], ["react"], at(1))
    found = search.search(user.id, "useEffect useMemo", 3)
    assert cache.loads == 2
    assert embedded["react"] not in [article_id for article_id, _ in found]


def test_a_user_past_the_cache_bound_is_searched_without_caching(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, embedded: dict[str, int]
) -> None:
    cache = VectorCache(max_bytes=16)
    search = ExactSemanticSearch(provider, EmbeddingQueries(store.session), cache)

    first = search.search(user.id, "React", 3)
    assert search.search(user.id, "React", 3) == first
    assert cache.loads == 2


def test_a_query_the_provider_cannot_embed_is_one_typed_error_whose_details_go_to_the_log(
    store: PeeweeStore,
    user: UserRecord,
    standin: EmbeddingStandIn,
    provider: ServiceEmbeddings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    standin.faults.status = 500
    search = ExactSemanticSearch(provider, EmbeddingQueries(store.session), VectorCache())

    with pytest.raises(EmbeddingFailed) as failed:
        search.search(user.id, "React", 3)

    assert (failed.value.status, failed.value.code) == (502, "EMBEDDING_FAILED")
    host = standin.url.removeprefix("http://")
    assert host not in failed.value.message and "searchMode=lexical" in failed.value.message
    [logged] = [r for r in caplog.records if r.getMessage() == "Query not embedded"]
    assert "HTTP 500" in logged.error and host in logged.error  # type: ignore[attr-defined]
