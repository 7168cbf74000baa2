"""Validation of the stack settings (``infra.config``), with a dictionary standing in for pulumi.Config."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.config import ConfigError, StackConfig
from tests.infra.mock_run import stack_config


class FakeConfig:
    """The ``pulumi.Config`` methods the program calls, over plain strings as the CLI passes them."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def require(self, key: str) -> str:
        if key not in self.values:
            raise KeyError(key)
        return self.values[key]

    def get_int(self, key: str) -> int | None:
        value = self.values.get(key)
        return None if value is None else int(value)

    def get_bool(self, key: str) -> bool | None:
        value = self.values.get(key)
        return None if value is None else value == "true"

    def get_object(self, key: str) -> Any:
        value = self.values.get(key)
        return None if value is None else json.loads(value)


def config_of(stack: str, **overrides: str) -> StackConfig:
    values = {
        k.removeprefix("blog-api:"): v for k, v in stack_config(stack).items() if k.startswith("blog-api:")
    }
    return StackConfig.load(FakeConfig({**values, **overrides}))


def test_committed_stacks_load() -> None:
    dev, prod = config_of("dev"), config_of("prod")
    assert (dev.function_name, prod.function_name) == ("d-st-blog-api", "p-st-blog-api")
    assert dev.python_version == "3.12"
    assert dev.artifact_path is None
    assert not dev.network.uses_existing_vpc and dev.custom_domain_name is None


def test_api_throttling_has_defaults_and_can_be_set() -> None:
    dev = config_of("dev")
    assert (dev.api_throttling_rate_limit, dev.api_throttling_burst_limit) == (25, 50)
    tuned = config_of("dev", apiThrottlingRateLimit="5", apiThrottlingBurstLimit="10")
    assert (tuned.api_throttling_rate_limit, tuned.api_throttling_burst_limit) == (5, 10)


def test_empty_values_mean_unset() -> None:
    config = config_of("dev", ssmKmsKeyArn="", vpcId="", articleBranch="")
    assert config.ssm_kms_key_arn is None and config.network.existing_vpc_id is None
    assert config.article_branch is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"physicalPrefix": "D_ST"}, "physicalPrefix"),
        ({"runtime": "python3.9"}, "runtime"),
        ({"vpcId": "vpc-1", "subnetIds": '["subnet-1"]'}, "subnetIds"),
        ({"subnetIds": '["subnet-1", "subnet-2"]'}, "vpcId"),
        ({"customDomainName": "api.example.com"}, "customDomain"),
        ({"webhookSecretParam": "arn:aws:ssm:ap-northeast-1:1:parameter/x"}, "webhookSecretParam"),
        ({"availabilityZoneCount": "1"}, "availabilityZoneCount"),
        ({"vpcCidr": "10.0.0.0/8"}, "vpcCidr"),
        ({"maximumEventAgeSeconds": "30"}, "maximumEventAgeSeconds"),
        ({"apiThrottlingRateLimit": "0"}, "apiThrottlingRateLimit"),
        ({"apiThrottlingBurstLimit": "0"}, "apiThrottlingBurstLimit"),
    ],
)
def test_invalid_settings_are_refused_naming_the_key(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_of("dev", **overrides)
