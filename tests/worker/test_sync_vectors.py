"""Semantic search's vectors through the sync: computed after the articles are committed, never inside a
transaction, and an embedding failure never fails a push: the articles are served, and their vectors
come at the next push once the provider answers."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from function.embeddings.http_json import HttpClients
from function.embeddings.port import ArticleText, Chunking, Vector
from function.embeddings.service import ServiceEmbeddings
from function.services import Services
from tests.kit.answers import contract_counts
from tests.kit.blog_fixtures import Blog, article
from tests.kit.embedding_standin import EmbeddingStandIn, embedding_standin


@pytest.fixture
def standin() -> Iterator[EmbeddingStandIn]:
    with embedding_standin() as running:
        yield running


@pytest.fixture
def provider(standin: EmbeddingStandIn) -> Iterator[ServiceEmbeddings]:
    http = HttpClients.default()
    yield ServiceEmbeddings(standin.url, http)
    http.documents.close()
    http.queries.close()


def missing(blog: Blog) -> dict[str, int]:
    with blog.store() as store:
        return (
            Services(blog.settings, embedding_provider=blog.embedding_provider).vector_status(store).missing
        )


def test_a_push_with_the_provider_down_serves_its_articles_and_the_next_push_embeds_them(
    blog: Blog, provider: ServiceEmbeddings, standin: EmbeddingStandIn
) -> None:
    # GIVEN an embedding service that answers 503 to everything
    blog.embedding_provider = provider
    standin.faults.status = 503
    blog.github.set_files({"articles/hello.md": article("Hello"), "articles/world.md": article("World")})

    # WHEN a push is synced, THEN it succeeds and serves both articles, whose vectors are missing
    answer = blog.push(delivery="d-1")
    assert answer.status_code == 200
    assert contract_counts(answer.get_json())["succeeded"] == 2
    assert sorted(a["slug"] for a in blog.articles()) == ["hello", "world"]
    assert missing(blog) == {"alice": 2}

    # WHEN the service is back and the next push changes one other file
    standin.faults.status = None
    blog.commit({"articles/third.md": article("Third")})
    assert blog.push(delivery="d-2").status_code == 200

    # THEN every served article has its vectors, the ones the first push left included
    assert missing(blog) == {}
    embedded = [c.body["text"] for c in standin.calls if c.path == "/embed" and c.body["mode"] == "document"]
    assert sorted(text.split("\n")[0] for text in embedded) == ["Hello", "Third", "World"]


def test_the_provider_is_called_only_outside_database_transactions(
    blog: Blog, provider: ServiceEmbeddings
) -> None:
    # GIVEN a provider that notes, at each call, whether the database has a transaction open
    seen: list[bool] = []

    class Watching:
        model = provider.model

        @property
        def chunking(self) -> str | None:
            return provider.chunking

        def chunk(self, article: ArticleText) -> Chunking:
            seen.append(blog.db.in_transaction())
            return provider.chunk(article)

        def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
            seen.append(blog.db.in_transaction())
            return provider.embed_documents(texts)

        def embed_query(self, text: str) -> Vector:
            return provider.embed_query(text)

    blog.embedding_provider = Watching()
    blog.github.set_files({f"articles/post-{i}.md": article(f"Post {i}") for i in range(3)})

    # WHEN a push is synced
    assert blog.push().status_code == 200

    # THEN the provider was called for each article, never inside a transaction
    assert len(seen) == 6 and not any(seen)
    assert missing(blog) == {}


def test_without_a_provider_the_sync_stores_no_vectors(blog: Blog) -> None:
    blog.github.set_files({"articles/hello.md": article("Hello")})

    assert blog.push().status_code == 200

    with blog.store() as store:
        status = Services(blog.settings).vector_status(store)
        assert (status.provider, status.missing) == (None, {})
        assert store.db.execute_sql("SELECT COUNT(*) FROM article_chunks").fetchone()[0] == 0


def test_the_synced_vectors_answer_the_search_routes_semantic_port(
    blog: Blog, provider: ServiceEmbeddings
) -> None:
    # GIVEN two articles synced with an embedding provider
    blog.embedding_provider = provider
    blog.github.set_files(
        {
            "articles/tidb.md": article("TiDB", body="TiDB Serverless に Lambda から接続する。"),
            "articles/react.md": article("React", body="useEffect and useMemo in practice."),
        }
    )
    assert blog.push().status_code == 200

    # WHEN the semantic port the search route uses is asked, on the route's connection
    services = Services(blog.settings, database=blog.db, embedding_provider=provider)
    semantic = services.semantic_search()
    assert semantic is not None
    with services.store() as store:
        user = store.users.get_user("alice")
        assert user is not None
        found = semantic.search(user.id, "useMemo useEffect", 5)
        ids = {slug: stored.id for slug, stored in store.reconcile.load_index(user.id).items()}

    # THEN both articles come back once each, the one that holds the query's words first
    assert [article_id for article_id, _ in found] == [ids["react"], ids["tidb"]]
    assert found[0][1] < found[1][1]


def test_without_a_provider_there_is_no_semantic_port(blog: Blog) -> None:
    assert Services(blog.settings, database=blog.db).semantic_search() is None
