"""Validation of the stack settings (``infra.config``): bad and example values refused before any resource."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigError, StackConfig
from tests.infra.mock_run import stack_config

RUNNER = Path(__file__).with_name("mock_run.py")
REPO_ROOT = Path(__file__).resolve().parents[2]


class FakeConfig:
    """The ``pulumi.Config`` methods the program calls, over plain strings as the CLI passes them."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def get_object(self, key: str) -> Any:
        value = self.values.get(key)
        return None if value is None else json.loads(value)


def config_of(stack: str, **overrides: str) -> StackConfig:
    values = {
        k.removeprefix("blog-api:"): v for k, v in stack_config(stack).items() if k.startswith("blog-api:")
    }
    return StackConfig.load(FakeConfig({**values, **overrides}), stack=stack)


def problems(stack: str, **overrides: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config_of(stack, **overrides)
    return info.value.problems


def test_committed_stacks_load_as_they_are() -> None:
    dev, prod = config_of("dev"), config_of("prod")
    assert (dev.function_name, prod.function_name) == ("d-st-blog-api", "p-st-blog-api")
    assert dev.python_version == "3.12"
    assert dev.artifact_path is None
    assert (dev.network.mode, dev.network.nat_type) == ("nat", "instance")
    assert (prod.network.mode, prod.network.nat_type) == ("nat", "gateway")
    assert dev.github_app_id is None and dev.github_app_id_param == "/d-st/blog-api/github-app-id"
    assert prod.creates_kms_key and prod.ssm_kms_key_arn is None and dev.ssm_kms_key is None


def test_api_throttling_has_defaults_and_can_be_set() -> None:
    dev = config_of("dev")
    assert (dev.api_throttling_rate_limit, dev.api_throttling_burst_limit) == (25, 50)
    tuned = config_of("dev", apiThrottlingRateLimit="5", apiThrottlingBurstLimit="10")
    assert (tuned.api_throttling_rate_limit, tuned.api_throttling_burst_limit) == (5, 10)


def test_empty_values_mean_unset() -> None:
    config = config_of("dev", ssmKmsKey="", vpcId="", articleBranch="", reservedConcurrency="")
    assert config.ssm_kms_key is None and config.network.existing_vpc_id is None
    assert config.article_branch is None and config.reserved_concurrency is None


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"physicalPrefix": "D_ST"}, "physicalPrefix"),
        ({"runtime": "python3.9"}, "runtime"),
        ({"networkMode": "private"}, "networkMode"),
        ({"natType": "nat-gateway"}, "natType"),
        ({"networkMode": "existing", "subnetIds": '["subnet-0a1b2c3d", "subnet-0a1b2c3e"]'}, "vpcId"),
        (
            {"networkMode": "existing", "vpcId": "vpc-0a1b2c3d4e5f60718", "subnetIds": '["subnet-0a1b2c3d"]'},
            "subnetIds",
        ),
        ({"subnetIds": '["subnet-0a1b2c3d", "subnet-0a1b2c3e"]'}, "networkMode"),
        ({"customDomainName": "api.yamada-blog.jp"}, "customDomainCertificateArn"),
        ({"webhookSecretParam": "arn:aws:ssm:ap-northeast-1:1:parameter/x"}, "webhookSecretParam"),
        ({"availabilityZoneCount": "1"}, "availabilityZoneCount"),
        ({"vpcCidr": "10.0.0.0/8"}, "vpcCidr"),
        ({"maximumEventAgeSeconds": "30"}, "maximumEventAgeSeconds"),
        ({"logRetentionDays": "10"}, "logRetentionDays"),
        ({"logLevel": "VERBOSE"}, "logLevel"),
        ({"snapStart": "yes"}, "snapStart"),
        ({"reservedConcurrency": "many"}, "reservedConcurrency"),
        ({"githubAppIdParam": ""}, "githubAppIdParam"),
        ({"githubAppId": "my-app"}, "githubAppId"),
        ({"ssmKmsKey": "alias/mine"}, "ssmKmsKey"),
        ({"ssmKmsKey": "create", "operatorRoleName": ""}, "operatorRoleName"),
        ({"natType": "instance", "natInstanceAmi": "latest"}, "natInstanceAmi"),
        ({"natType": "instance", "natInstanceType": "t3.nano"}, "natInstanceAmi"),
        ({"alarmEmails": '["not an address"]'}, "alarmEmails"),
        ({"httpsProxy": "squid:3128"}, "httpsProxy"),
        ({"apiThrottlingRateLimit": "0"}, "apiThrottlingRateLimit"),
        ({"apiThrottlingBurstLimit": "0"}, "apiThrottlingBurstLimit"),
    ],
)
def test_invalid_settings_are_refused_naming_the_key(overrides: dict[str, str], key: str) -> None:
    found = problems("dev", **overrides)
    assert len(found) == 1, found
    assert found[0].startswith(f"blog-api:{key} ")
    assert f"pulumi config set blog-api:{key} " in found[0] and found[0].endswith("--stack dev")


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"httpsProxy": "http://squid.p-st.internal.example:3128"}, "httpsProxy"),
        ({"githubAppId": "654321"}, "githubAppId"),
        ({"githubAppId": "123456"}, "githubAppId"),
        ({"noProxy": "db.example.com"}, "noProxy"),
        ({"alarmEmails": '["you@example.com"]'}, "alarmEmails"),
        (
            {"customDomainName": "blog-api.example.com", "customDomainCertificateArn": "arn:aws:acm:x"},
            "customDomainName",
        ),
        ({"githubApiUrl": "https://github.example/api/v3"}, "githubApiUrl"),
        (
            {
                "networkMode": "existing",
                "vpcId": "vpc-0123456789abcdef0",
                "subnetIds": '["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]',
            },
            "vpcId",
        ),
    ],
)
def test_documented_examples_are_refused_as_placeholders(overrides: dict[str, str], key: str) -> None:
    (problem,) = problems("prod", **overrides)
    assert problem.startswith(f"blog-api:{key} ") and "--stack prod" in problem


def test_every_problem_is_reported_at_once_one_line_each() -> None:
    found = problems("dev", runtime="python2", httpsProxy="http://proxy.example:3128", logLevel="LOUD")
    assert [line.split(" ", 1)[0] for line in found] == [
        "blog-api:runtime", "blog-api:httpsProxy", "blog-api:logLevel",
    ]  # fmt: skip
    assert all("\n" not in line for line in found)


def test_a_placeholder_stops_the_program_before_any_resource(tmp_path: Path) -> None:
    artifact = tmp_path / "a.zip"
    artifact.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    out = tmp_path / "run.json"
    result = subprocess.run(
        [sys.executable, str(RUNNER), "prod", "--artifact", str(artifact), "--out", str(out),
         "--set", "blog-api:httpsProxy=http://squid.p-st.internal.example:3128"],
        cwd=REPO_ROOT / "infra", capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    record = json.loads(out.read_text())
    assert record["resources"] == []
    assert record["error"].splitlines()[1:] == [
        "blog-api:httpsProxy squid.p-st.internal.example is an example host; fix: "
        "pulumi config set blog-api:httpsProxy 'http://<your squid>:3128' --stack prod"
    ]
    # Pulumi prints a RunError without a traceback: the message is what the user sees.
    assert "Traceback" not in record["error"]


def _has_type(value: Any, annotation: Any) -> bool:
    """``value`` is of ``annotation`` (a class, ``X | None``, ``tuple[X, ...]``)."""
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return any(_has_type(value, option) for option in typing.get_args(annotation))
    if origin is tuple:
        (item, _) = typing.get_args(annotation)
        return isinstance(value, tuple) and all(_has_type(v, item) for v in value)
    if annotation is type(None):
        return value is None
    return isinstance(value, annotation)


@pytest.mark.parametrize("overrides", [{}, {"reservedConcurrency": "20", "githubAppId": "1000001"}])
def test_every_value_read_has_its_fields_type(overrides: dict[str, str]) -> None:
    # The keyword arguments are built from the declarations: each reader's type must be its field's.
    for stack in ("dev", "prod"):
        config = config_of(stack, **overrides)
        for owner in (config, config.network):
            hints = typing.get_type_hints(type(owner))
            for f in dataclasses.fields(owner):
                value = getattr(owner, f.name)
                assert _has_type(value, hints[f.name]), (f.name, value, hints[f.name])
