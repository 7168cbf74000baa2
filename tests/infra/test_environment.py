"""The function's environment comes from the runtime settings' declarations (``infra.environment``)."""

from __future__ import annotations

from infra.config import KEYS
from shared.runtime_settings import declared
from tests.infra.deployment import Deployment


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
    set_somewhere = {name for deployment in deployments.values() for name in deployment.environment}
    wanted = {spec.env for spec in declared() if spec.stack_key or spec.on_lambda}
    wanted |= {spec.param.env for spec in declared() if spec.param}
    assert wanted <= set_somewhere, wanted - set_somewhere


def test_a_setting_fixed_on_lambda_has_that_value_on_every_stack(deployment: Deployment) -> None:
    fixed = {spec.env: spec.on_lambda for spec in declared() if spec.on_lambda is not None}
    assert fixed == {"ARTICLE_SOURCE": "github", "AWS_LWA_PASS_THROUGH_PATH": "/events"}
    assert {name: deployment.environment[name] for name in fixed} == fixed

