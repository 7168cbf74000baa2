"""Semantic search's stack keys: the provider, URL and model set on the function, the key only as an SSM
parameter the role may read, and Bedrock's model the only one the role may invoke."""

from __future__ import annotations

import pytest

from tests.infra.deployment import Deployment
from tests.infra.test_config import config_of, problems

KEY_PARAM = "/d-st/blog-api/embedding-api-key"
TITAN = "amazon.titan-embed-text-v2:0"


def test_the_embedding_settings_reach_the_function(deployments: dict[str, Deployment]) -> None:
    environment = deployments["dev-bedrock"].environment
    assert environment["EMBEDDING_PROVIDER"] == "bedrock"
    assert environment["EMBEDDING_MODEL"] == TITAN
    assert environment["EMBEDDING_API_KEY_PARAM"] == KEY_PARAM
    assert environment["EMBEDDING_URL"] == "https://bedrock-runtime.vpce.kumo-corp.jp"
    assert "EMBEDDING_API_KEY" not in environment


def test_with_bedrock_the_role_may_invoke_its_embedding_model_and_no_other(
    deployments: dict[str, Deployment],
) -> None:
    bedrock = deployments["dev-bedrock"]
    (statement,) = bedrock.statements("bedrock:InvokeModel")
    assert statement["Resource"] == [f"arn:aws:bedrock:{bedrock.region}::foundation-model/{TITAN}"]
    (read,) = bedrock.statements("ssm:GetParameters")
    assert [r for r in read["Resource"] if r.endswith(KEY_PARAM)]


def test_without_bedrock_the_role_may_invoke_no_model(deployments: dict[str, Deployment]) -> None:
    for scenario in ("dev", "prod"):
        assert deployments[scenario].statements("bedrock:InvokeModel") == []
        assert "EMBEDDING_PROVIDER" not in deployments[scenario].environment


def test_the_committed_stacks_leave_semantic_search_off() -> None:
    for stack in ("dev", "prod"):
        config = config_of(stack)
        assert (config.embedding_provider, config.embedding_api_key_param, config.bedrock_models) == (
            None,
            None,
            (),
        )


def test_the_default_titan_model_is_granted_when_none_is_named() -> None:
    assert config_of("dev", embeddingProvider="bedrock").bedrock_models == (TITAN,)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"embeddingProvider": "word2vec"}, "embeddingProvider"),
        ({"embeddingProvider": "service"}, "embeddingUrl"),
        ({"embeddingProvider": "openai", "embeddingUrl": "http://embed.kumo-corp.jp"}, "embeddingUrl"),
        ({"embeddingProvider": "openai", "embeddingUrl": "https://api.example.com"}, "embeddingUrl"),
        ({"embeddingModel": "titan v2"}, "embeddingModel"),
        ({"embeddingApiKeyParam": "arn:aws:ssm:x"}, "embeddingApiKeyParam"),
    ],
)
def test_bad_values_are_refused_naming_the_key(overrides: dict[str, str], key: str) -> None:
    found = problems("dev", **overrides)
    assert found[0].startswith(f"blog-api:{key} "), found
