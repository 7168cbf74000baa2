"""Titan Text Embeddings V2 through botocore: the request as Bedrock reads it (on a loopback stub as the
``endpoint_url``, and on moto), what is accepted and what is refused."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from moto import mock_aws

from function.aws import clients as aws_clients
from function.embeddings.bedrock import DEFAULT_MODEL, DIMENSIONS, BedrockEmbeddings
from function.errors import EmbeddingFailed
from tests.kit.embedding_standin import EmbeddingStandIn, hashed_vector


def _client(endpoint_url: str | None) -> Any:
    return aws_clients.client(
        "bedrock-runtime", connect_timeout=1, read_timeout=2, attempts=2, endpoint_url=endpoint_url
    )


def bedrock(endpoint_url: str | None) -> BedrockEmbeddings:
    return BedrockEmbeddings(lambda: _client(endpoint_url), lambda: _client(endpoint_url))


@pytest.mark.usefixtures("aws_env")
def test_titan_is_asked_for_normalised_vectors_of_1024_dimensions(standin: EmbeddingStandIn) -> None:
    vector = bedrock(standin.url).embed_query("TiDB と Lambda")

    call = standin.calls[-1]
    assert call.path == f"/model/{DEFAULT_MODEL.replace(':', '%3A')}/invoke"
    assert call.body == {"inputText": "TiDB と Lambda", "dimensions": DIMENSIONS, "normalize": True}
    assert call.headers["authorization"].startswith("AWS4-HMAC-SHA256 ")  # signed by botocore
    assert np.allclose(vector, hashed_vector("TiDB と Lambda", DIMENSIONS), atol=1e-6)


@pytest.mark.usefixtures("aws_env")
def test_the_model_is_part_of_what_made_the_vectors(standin: EmbeddingStandIn) -> None:
    assert bedrock(standin.url).model == f"bedrock:{DEFAULT_MODEL}:{DIMENSIONS}"


@pytest.mark.usefixtures("aws_env")
def test_a_refusal_is_one_typed_error_naming_its_code(standin: EmbeddingStandIn) -> None:
    standin.faults.status = 400

    with pytest.raises(EmbeddingFailed, match=r"refused InvokeModel: .*\(HTTP 400\)"):
        bedrock(standin.url).embed_documents(["hello"])


@pytest.mark.usefixtures("aws_env")
def test_a_vector_of_another_dimension_is_refused(standin: EmbeddingStandIn) -> None:
    standin.faults.wrong_dimension = True

    with pytest.raises(EmbeddingFailed, match=f"{DIMENSIONS - 1} dimensions, not {DIMENSIONS}"):
        bedrock(standin.url).embed_query("hello")


@pytest.mark.usefixtures("aws_env")
def test_moto_takes_the_request_and_its_empty_answer_is_refused() -> None:
    # moto's bedrock-runtime parses the request as Bedrock does but answers no embedding.
    with mock_aws():
        with pytest.raises(EmbeddingFailed, match="no vector"):
            bedrock(None).embed_query("hello")


def test_a_body_that_is_not_json_is_refused() -> None:
    class Answer:
        def read(self) -> bytes:
            return b"<html>"

    class Client:
        def invoke_model(self, **request: Any) -> dict[str, Any]:
            json.loads(request["body"])
            return {"body": Answer()}

    with pytest.raises(EmbeddingFailed, match="other than JSON"):
        BedrockEmbeddings(Client, Client).embed_query("hello")
