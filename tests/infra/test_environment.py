"""The function's environment comes from the runtime settings' declarations (``infra.environment``)."""

from __future__ import annotations

from typing import TypeVar

import pytest

from infra import stack_docs
from infra.config import KEYS, ConfigError, StackConfig
from infra.environment import plain_variables
from infra.stack_keys import KeyCheck, key, stack_settings, text
from shared.runtime_settings import RuntimeSettings, declared
from shared.setting import declared_settings, setting
from tests.infra.deployment import Deployment
from tests.infra.mock_run import BOOTSTRAP_STACK, stack_config
from tests.infra.test_config import FakeConfig

Config = TypeVar("Config", bound=StackConfig)
REGION, ACCOUNT = "ap-northeast-1", "123456789012"


def test_every_stack_key_a_setting_names_is_a_key_of_the_stack() -> None:
    named = {spec.stack_key for spec in declared() if spec.stack_key}
    named |= {spec.param.stack_key for spec in declared() if spec.param}
    assert named, "no runtime setting is set by the stack"
    assert named <= set(KEYS), named - set(KEYS)


def test_every_setting_the_stack_sets_reaches_the_function_in_some_stack(
    deployments: dict[str, Deployment],
) -> None:
    # Some are conditional (ARTICLE_BRANCH when set, SELF_INVOKE_QUALIFIER with SnapStart, NO_PROXY with
    # endpoints or hosts): each appears in at least one scenario.
    stacks = [d for d in deployments.values() if d.stack != BOOTSTRAP_STACK]
    set_somewhere = {name for deployment in stacks for name in deployment.environment}
    wanted = {spec.env for spec in declared() if spec.stack_key or spec.on_lambda}
    wanted |= {spec.param.env for spec in declared() if spec.param}
    assert wanted <= set_somewhere, wanted - set_somewhere


def test_a_setting_fixed_on_lambda_has_that_value_on_every_stack(deployment: Deployment) -> None:
    fixed = {spec.env: spec.on_lambda for spec in declared() if spec.on_lambda is not None}
    assert fixed == {"ARTICLE_SOURCE": "github", "AWS_LWA_PASS_THROUGH_PATH": "/events"}
    assert {name: deployment.environment[name] for name in fixed} == fixed


# Adding a setting the stack sets is two declarations: the runtime setting (naming its stack key) and
# the stack key; the environment, both tables and the stack files' check follow (docs/development.md).
@declared_settings
class RuntimeWithRetries(RuntimeSettings):
    fetch_retries: int = setting(
        env="FETCH_RETRIES", doc="how often a failed fetch is tried again", parse=int, default=3,
        stack_key="fetchRetries",
    )  # fmt: skip


def _digits(value: str, k: KeyCheck) -> None:
    k.check(value.isdigit(), "must be a whole number", "3")


@stack_settings
class StackWithRetries(StackConfig):
    fetch_retries: str = key(
        "fetchRetries", text, default="3", doc="how often the function tries a fetch again", check=_digits
    )


def test_a_new_stack_key_is_read_checked_and_reaches_the_function() -> None:
    config = config_of(StackWithRetries, fetchRetries="5")

    assert config.fetch_retries == "5" and config.value_of("fetchRetries") == "5"
    assert plain_variables(config, REGION, "1000001", ACCOUNT, RuntimeWithRetries)["FETCH_RETRIES"] == "5"
    assert "FETCH_RETRIES" not in plain_variables(config, REGION, "1000001", ACCOUNT)
    with pytest.raises(ConfigError) as caught:
        config_of(StackWithRetries, fetchRetries="often")
    assert caught.value.problems == [
        "blog-api:fetchRetries must be a whole number; "
        "fix: pulumi config set blog-api:fetchRetries '3' --stack dev"
    ]


def test_a_new_stack_key_has_its_row_naming_the_variable_it_sets() -> None:
    rows = stack_docs.table(StackWithRetries, RuntimeWithRetries).splitlines()
    assert rows[-1] == (
        "| `fetchRetries` | never committed "
        "| how often the function tries a fetch again; sets `FETCH_RETRIES` |"
    )


def config_of(cls: type[Config], **overrides: str) -> Config:
    committed = stack_config("dev").items()
    values = {k.removeprefix("blog-api:"): v for k, v in committed if k.startswith("blog-api:")}
    return cls.load(FakeConfig({**values, **overrides}), stack="dev")
