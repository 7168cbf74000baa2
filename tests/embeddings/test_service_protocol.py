"""The original embedding service's protocol (``/embed``, ``/chunks``) against a stand-in on loopback:
what is sent, what is accepted, and every way an answer is refused."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from function.embeddings.http_json import HttpClients
from function.embeddings.port import MAX_TOKENS, OVERLAP_TOKENS, ArticleText
from function.embeddings.service import ServiceEmbeddings
from function.errors import EmbeddingFailed
from tests.kit.embedding_standin import DIMENSIONS, EmbeddingStandIn, closed_port_url, hashed_vector

ARTICLE = ArticleText(
    title="Lambda と TiDB",
    description="接続の話",
    content="Intro paragraph.\n\n## Setup\n\nInstall the driver.\n\nThen connect.",
)
API_KEY = "sk-embedding-secret-value-0123456789"


def service(standin: EmbeddingStandIn, http: HttpClients, api_key: str | None = None) -> ServiceEmbeddings:
    return ServiceEmbeddings(standin.url, http, api_key=api_key)


def test_query_is_embedded_in_query_mode(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    vector = service(standin, quick_http).embed_query("TiDB vector search")

    assert standin.calls[-1].path == "/embed"
    assert standin.calls[-1].body == {"text": "TiDB vector search", "mode": "query"}
    assert vector.dtype == np.float32 and len(vector) == DIMENSIONS
    assert np.allclose(vector, hashed_vector("TiDB vector search"), atol=1e-6)


def test_documents_are_embedded_in_document_mode_in_order(
    standin: EmbeddingStandIn, quick_http: HttpClients
) -> None:
    vectors = service(standin, quick_http).embed_documents(["first", "second"])

    assert [c.body for c in standin.calls] == [
        {"text": "first", "mode": "document"},
        {"text": "second", "mode": "document"},
    ]
    assert np.allclose(vectors[1], hashed_vector("second"), atol=1e-6)


def test_chunks_are_asked_with_the_sizes_and_read_back(
    standin: EmbeddingStandIn, quick_http: HttpClients
) -> None:
    chunking = service(standin, quick_http).chunk(ARTICLE)

    sent = standin.calls[-1].body
    assert standin.calls[-1].path == "/chunks"
    assert sent == {
        "title": ARTICLE.title,
        "description": ARTICLE.description,
        "content": ARTICLE.content,
        "max_tokens": MAX_TOKENS,
        "overlap_tokens": OVERLAP_TOKENS,
    }
    assert [c.index for c in chunking.chunks] == [0, 1, 2, 3]
    assert chunking.chunks[1].heading == "Setup"
    assert chunking.chunks[2].content == "Install the driver."
    assert chunking.version == f"service-1:{MAX_TOKENS}:{OVERLAP_TOKENS}"


def test_a_new_chunking_version_of_the_service_is_a_new_version(
    standin: EmbeddingStandIn, quick_http: HttpClients
) -> None:
    provider = service(standin, quick_http)
    first = provider.chunk(ARTICLE).version
    standin.faults.version = "2"

    assert provider.chunk(ARTICLE).version != first
    assert provider.chunking == provider.chunk(ARTICLE).version


def test_the_api_key_is_sent_as_a_bearer_token_and_never_in_an_error(
    standin: EmbeddingStandIn, quick_http: HttpClients, caplog: pytest.LogCaptureFixture
) -> None:
    provider = service(standin, quick_http, api_key=API_KEY)
    provider.embed_query("hello")
    assert standin.calls[-1].headers["authorization"] == f"Bearer {API_KEY}"

    standin.faults.status = 401
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbeddingFailed) as failed:
        provider.embed_query("hello")

    assert "401" in str(failed.value)
    assert API_KEY not in str(failed.value)
    assert API_KEY not in caplog.text


def test_a_provider_that_is_down_fails_with_one_typed_error(quick_http: HttpClients) -> None:
    provider = ServiceEmbeddings(closed_port_url(), quick_http)

    with pytest.raises(EmbeddingFailed, match="gave no answer") as failed:
        provider.embed_query("hello")
    assert failed.value.status == 502 and failed.value.code == "EMBEDDING_FAILED"


def test_a_slow_provider_is_given_up_after_the_time_out(
    standin: EmbeddingStandIn, quick_http: HttpClients
) -> None:
    standin.faults.delay_s = 1.5  # past the 0.5 s read time-out, on both tries

    with pytest.raises(EmbeddingFailed, match=r"gave no answer.*ReadTimeout"):
        service(standin, quick_http).embed_query("hello")
    assert len(standin.calls) == 2  # retried once, then given up


def test_a_transient_error_is_retried(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    standin.faults.status = 503
    with pytest.raises(EmbeddingFailed, match="HTTP 503"):
        service(standin, quick_http).embed_query("hello")

    assert [c.path for c in standin.calls] == ["/embed", "/embed"]


def test_a_vector_shorter_than_its_declared_dimension_is_refused(
    standin: EmbeddingStandIn, quick_http: HttpClients
) -> None:
    standin.faults.wrong_dimension = True

    with pytest.raises(EmbeddingFailed, match=f"{DIMENSIONS - 1} dimensions but declared {DIMENSIONS}"):
        service(standin, quick_http).embed_query("hello")


def test_a_dimension_that_changes_between_answers_is_refused(
    standin: EmbeddingStandIn, quick_http: HttpClients
) -> None:
    provider = service(standin, quick_http)
    provider.embed_query("hello")
    standin.dimensions = DIMENSIONS * 2  # the service now answers (consistently) another dimension

    with pytest.raises(EmbeddingFailed, match=f"{DIMENSIONS * 2} dimensions, not {DIMENSIONS}"):
        provider.embed_query("hello")


def test_non_finite_values_are_refused(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    standin.faults.non_finite = True

    with pytest.raises(EmbeddingFailed, match="not finite"):
        service(standin, quick_http).embed_documents(["hello"])


def test_chunks_out_of_sequence_are_refused(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    standin.faults.skip_index = True

    with pytest.raises(EmbeddingFailed, match="index 2 where 1 was due"):
        service(standin, quick_http).chunk(ARTICLE)


def test_an_answer_that_is_not_json_is_refused(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    provider = ServiceEmbeddings(standin.url + "/nowhere", quick_http)

    with pytest.raises(EmbeddingFailed, match="HTTP 404"):
        provider.embed_query("hello")
