"""SnapStart (``snapStart: true``): published versions, the alias ``live``, and everything pointed at it."""

from __future__ import annotations

from shared import names
from tests.infra.conftest import ACCOUNT_ID
from tests.infra.deployment import (
    ALIAS,
    EVENT_TARGET,
    INTEGRATION,
    INVOKE_CONFIG,
    PERMISSION,
    ROLE_POLICY,
    Deployment,
)

FUNCTION_ARN = f"arn:aws:lambda:ap-northeast-1:{ACCOUNT_ID}:function:p-st-blog-api"


def test_off_by_default_nothing_is_published(deployment: Deployment) -> None:
    inputs = deployment.function.inputs
    assert deployment.setting("snapStart") == "false"
    assert inputs.get("publish") is False and "snapStart" not in inputs
    assert deployment.of_type(ALIAS) == []
    uri = deployment.one(INTEGRATION).inputs["integrationUri"]
    assert uri.endswith(f":function:{deployment.prefix}-blog-api/invocations")


def test_function_publishes_versions_with_snapshots(deployments: dict[str, Deployment]) -> None:
    snap = deployments["prod-snapstart"]
    inputs = snap.function.inputs
    assert inputs["publish"] is True
    assert inputs["snapStart"] == {"applyOn": "PublishedVersions"}
    assert inputs["runtime"] in {"python3.12", "python3.13"}


def test_alias_live_points_at_the_published_version(deployments: dict[str, Deployment]) -> None:
    snap = deployments["prod-snapstart"]
    alias = snap.one(ALIAS).inputs
    assert alias["name"] == names.LIVE_ALIAS == "live"
    assert alias["functionName"] == "p-st-blog-api"
    # The mock reports version "7" for a published function; $LATEST would mean no snapshot.
    assert alias["functionVersion"] == "7"


def test_api_invokes_the_alias_and_may_invoke_only_it(deployments: dict[str, Deployment]) -> None:
    snap = deployments["prod-snapstart"]
    assert snap.one(INTEGRATION).inputs["integrationUri"] == (
        f"arn:aws:apigateway:ap-northeast-1:lambda:path/2015-03-31/functions/{FUNCTION_ARN}:live/invocations"
    )
    permissions = {p.inputs["principal"]: p.inputs for p in snap.of_type(PERMISSION)}
    assert permissions["apigateway.amazonaws.com"]["qualifier"] == "live"
    assert permissions["events.amazonaws.com"]["qualifier"] == "live"
    assert snap.one(EVENT_TARGET).inputs["arn"] == f"{FUNCTION_ARN}:live"


def test_self_invoke_is_granted_on_the_alias_and_the_function(deployments: dict[str, Deployment]) -> None:
    snap = deployments["prod-snapstart"]
    (statement,) = snap.statements("lambda:InvokeFunction")
    assert statement["Resource"] == [FUNCTION_ARN, f"{FUNCTION_ARN}:live"]
    (plain,) = deployments["prod"].statements("lambda:InvokeFunction")
    assert plain["Resource"] == FUNCTION_ARN


def test_alias_gets_the_same_retries_and_dead_letter_queue(deployments: dict[str, Deployment]) -> None:
    snap = deployments["prod-snapstart"]
    configs = {c.inputs.get("qualifier"): c.inputs for c in snap.of_type(INVOKE_CONFIG)}
    assert set(configs) == {None, "live"}
    assert configs["live"]["maximumRetryAttempts"] == configs[None]["maximumRetryAttempts"] == 2
    assert configs["live"]["destinationConfig"] == configs[None]["destinationConfig"]
    assert snap.depends_on(snap.named(INVOKE_CONFIG, "-async-live"), snap.one(ALIAS))


def test_policy_still_does_not_depend_on_the_function(deployments: dict[str, Deployment]) -> None:
    snap = deployments["prod-snapstart"]
    assert not snap.depends_on(snap.named(ROLE_POLICY, "-runtime-policy"), snap.function)


def test_the_worker_is_invoked_on_the_alias_so_it_runs_from_the_snapshot_too(
    deployments: dict[str, Deployment], deployment: Deployment
) -> None:
    assert deployments["prod-snapstart"].environment["SELF_INVOKE_QUALIFIER"] == names.LIVE_ALIAS
    assert "SELF_INVOKE_QUALIFIER" not in deployment.environment
