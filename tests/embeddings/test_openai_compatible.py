"""An OpenAI-compatible ``/v1/embeddings`` against the stand-in: batches, order, the model, the key."""

from __future__ import annotations

import numpy as np
import pytest

from function.embeddings import openai_compatible
from function.embeddings.chunking import LOCAL_CHUNKING
from function.embeddings.http_json import HttpClients
from function.embeddings.openai_compatible import OpenAiEmbeddings, embeddings_url
from function.embeddings.port import ArticleText
from function.errors import EmbeddingFailed
from tests.kit.embedding_standin import EmbeddingStandIn, hashed_vector


def test_the_endpoint_is_under_v1_whether_or_not_the_base_says_it() -> None:
    assert embeddings_url("https://api.example.com") == "https://api.example.com/v1/embeddings"
    assert embeddings_url("https://api.example.com/v1/") == "https://api.example.com/v1/embeddings"


def test_documents_go_in_batches_and_come_back_in_order(
    standin: EmbeddingStandIn, quick_http: HttpClients, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai_compatible, "BATCH", 2)
    provider = OpenAiEmbeddings(standin.url, quick_http, api_key="k-123", model="nomic-embed-text")
    texts = ["alpha", "beta", "gamma"]

    vectors = provider.embed_documents(texts)

    assert [c.body["input"] for c in standin.calls] == [["alpha", "beta"], ["gamma"]]
    assert {c.body["model"] for c in standin.calls} == {"nomic-embed-text"}
    assert standin.calls[0].headers["authorization"] == "Bearer k-123"
    for text, vector in zip(texts, vectors, strict=True):
        assert np.allclose(vector, hashed_vector(text), atol=1e-6)
    assert provider.model == "openai:nomic-embed-text"


def test_articles_are_chunked_locally(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    provider = OpenAiEmbeddings(standin.url, quick_http)

    chunking = provider.chunk(ArticleText("T", "", "# One\n\nbody\n\n# Two\n\nmore"))

    assert chunking.version == LOCAL_CHUNKING == provider.chunking
    assert [c.heading for c in chunking.chunks] == ["One", "Two"]
    assert standin.calls == []  # no call: chunking is ours


def test_a_wrong_dimension_is_refused(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    provider = OpenAiEmbeddings(standin.url, quick_http)
    provider.embed_query("hello")
    standin.faults.wrong_dimension = True

    with pytest.raises(EmbeddingFailed, match="dimensions, not"):
        provider.embed_query("hello")


def test_an_error_status_is_one_typed_error(standin: EmbeddingStandIn, quick_http: HttpClients) -> None:
    standin.faults.status = 429

    with pytest.raises(EmbeddingFailed, match="HTTP 429"):
        OpenAiEmbeddings(standin.url, quick_http).embed_documents(["a"])
    assert len(standin.calls) == 2  # a rate limit is retried
