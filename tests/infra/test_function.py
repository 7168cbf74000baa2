"""The Lambda function, its role and policy, retries, dead letters, logs and alarms, for dev and prod."""

from __future__ import annotations

import json

from function.webhooks.envelope import PAYLOAD_BUDGET
from infra.function import DLQ_MAX_MESSAGE_SIZE
from shared import names
from shared.names import ASYNC_INVOKE_PAYLOAD_LIMIT
from tests.infra.conftest import ACCOUNT_ID, KMS_KEY_ARN
from tests.infra.deployment import (
    ATTACHMENT,
    INVOKE_CONFIG,
    LOG_GROUP,
    QUEUE,
    ROLE,
    ROLE_POLICY,
    Deployment,
    resources_of,
)
from tests.infra.mock_run import APP_ID_FROM_SSM

# Lambda's on-failure record around the event: request and response context, version, timestamp (a few
# hundred bytes; 4 KiB is the room the envelope's budget leaves below Lambda's limit).
ON_FAILURE_RECORD_BYTES = 4096


def test_function_has_the_fixed_prefixed_name(deployment: Deployment) -> None:
    assert deployment.function.inputs["name"] == f"{deployment.prefix}-blog-api"
    assert deployment.function.inputs["name"] == names.function_name(deployment.prefix)


def test_function_runs_the_shared_handler_on_a_current_python(deployment: Deployment) -> None:
    inputs = deployment.function.inputs
    assert inputs["handler"] == names.HANDLER == "function.handler.handler"
    assert inputs["runtime"] in {"python3.12", "python3.13"}
    assert inputs["architectures"] == ["x86_64"]


def test_function_timeout_and_memory_come_from_config(deployment: Deployment) -> None:
    assert deployment.function.inputs["timeout"] == int(deployment.setting("timeout"))
    assert deployment.function.inputs["memorySize"] == int(deployment.setting("memorySize"))


def test_function_code_is_the_prebuilt_artifact_and_nothing_is_built(deployment: Deployment) -> None:
    assert deployment.function.inputs["code"] == {"fileArchive": deployment.setting("artifactPath")}
    assert not deployment.packaging_loaded


def test_environment_sets_pass_through_path_and_plain_settings(deployment: Deployment) -> None:
    env = deployment.environment
    assert env["AWS_LWA_PASS_THROUGH_PATH"] == "/events"
    assert env["ARTICLE_BRANCH"] == deployment.setting("articleBranch")
    assert env["ARTICLES_DIR"] == deployment.setting("articlesDir")
    assert env["LOG_LEVEL"] == deployment.setting("logLevel")
    # NAT is the way out: no proxy unless one is configured.
    assert deployment.setting("httpsProxy") == "" and "HTTPS_PROXY" not in env


def test_a_configured_proxy_is_passed_on(deployments: dict[str, Deployment]) -> None:
    existing = deployments["dev-existing-vpc"]
    assert existing.environment["HTTPS_PROXY"] == "http://10.30.0.10:3128"


def test_environment_names_the_ssm_parameters_and_holds_no_secret(deployment: Deployment) -> None:
    env = deployment.environment
    assert env["GITHUB_WEBHOOK_SECRET_PARAM"] == deployment.setting("webhookSecretParam")
    assert env["GITHUB_APP_PRIVATE_KEY_PARAM"] == deployment.setting("githubAppPrivateKeyParam")
    assert env["DATABASE_URL_PARAM"] == deployment.setting("databaseUrlParam")
    for secret in ("GITHUB_WEBHOOK_SECRET", "GITHUB_APP_PRIVATE_KEY", "DATABASE_URL"):
        assert secret not in env
    # Lambda sets this one itself; it is what switches the app into accept-and-invoke mode.
    assert "AWS_LAMBDA_FUNCTION_NAME" not in env


def test_no_proxy_keeps_endpoint_traffic_off_the_proxy(deployments: dict[str, Deployment]) -> None:
    prod = deployments["prod-endpoints"]
    hosts = prod.environment["NO_PROXY"].split(",")
    assert f"lambda.{prod.region}.amazonaws.com" in hosts
    assert f"ssm.{prod.region}.amazonaws.com" in hosts


def test_no_proxy_is_unset_without_endpoints_or_configured_hosts(dev: Deployment) -> None:
    assert "NO_PROXY" not in dev.environment


def test_configured_no_proxy_hosts_come_first(deployments: dict[str, Deployment]) -> None:
    hosts = deployments["prod-custom"].environment["NO_PROXY"].split(",")
    assert hosts[:2] == ["internal.corp", "db.corp"]


def test_role_has_basic_execution_and_vpc_access(deployment: Deployment) -> None:
    role = deployment.one(ROLE)
    assert role.inputs["name"] == f"{deployment.prefix}-blog-api-role"
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {
        "Service": "lambda.amazonaws.com"
    }
    attached = {a.inputs["policyArn"] for a in deployment.of_type(ATTACHMENT)}
    assert attached == {
        "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
        "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
    }


def test_self_invoke_is_granted_on_the_arn_string(deployment: Deployment) -> None:
    (statement,) = deployment.statements("lambda:InvokeFunction")
    expected = f"arn:aws:lambda:ap-northeast-1:{ACCOUNT_ID}:function:{deployment.prefix}-blog-api"
    assert statement["Resource"] == expected
    assert expected == names.function_arn(deployment.region, ACCOUNT_ID, deployment.prefix)
    # The string matches what AWS reports for the function, so the grant really covers it.
    assert deployment.outputs["functionArn"] == expected


def test_policy_does_not_depend_on_the_function(deployment: Deployment) -> None:
    policy = deployment.named(ROLE_POLICY, "-runtime-policy")
    assert not deployment.depends_on(policy, deployment.function)
    assert not deployment.depends_on(deployment.one(ROLE), deployment.function)


def test_function_waits_for_its_policy(deployment: Deployment) -> None:
    assert deployment.named(ROLE_POLICY, "-runtime-policy").urn in deployment.function.dependencies


def test_parameters_readable_are_exactly_the_functions_own(deployment: Deployment) -> None:
    (statement,) = deployment.statements("ssm:GetParameters")
    assert "ssm:GetParameter" in statement["Action"]
    expected = {
        f"arn:aws:ssm:{deployment.region}:{ACCOUNT_ID}:parameter{deployment.setting(key)}"
        for key in ("webhookSecretParam", "githubAppPrivateKeyParam", "databaseUrlParam")
    }
    assert set(resources_of(statement)) == expected
    assert all(f"parameter/{deployment.prefix}/" in arn for arn in expected)


def test_dead_letter_queue_is_the_only_queue_the_role_may_send_to(deployment: Deployment) -> None:
    (statement,) = deployment.statements("sqs:SendMessage")
    queue = deployment.one(QUEUE)
    assert queue.inputs["name"] == f"{deployment.prefix}-blog-api-dlq"
    assert resources_of(statement) == [
        f"arn:aws:sqs:{deployment.region}:{ACCOUNT_ID}:{deployment.prefix}-blog-api-dlq"
    ]


def test_policy_has_no_wildcard_resource_or_action(deployment: Deployment) -> None:
    for statement in deployment.runtime_policy["Statement"]:
        assert statement["Effect"] == "Allow"
        for resource in resources_of(statement):
            assert "*" not in resource, statement
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert all("*" not in action for action in actions), statement


def test_kms_decrypt_only_for_a_customer_managed_key_and_only_through_ssm(
    deployments: dict[str, Deployment],
) -> None:
    assert deployments["dev"].statements("kms:Decrypt") == []
    custom = deployments["prod-custom"]
    (statement,) = custom.statements("kms:Decrypt")
    assert statement["Resource"] == KMS_KEY_ARN
    assert statement["Condition"] == {"StringEquals": {"kms:ViaService": "ssm.ap-northeast-1.amazonaws.com"}}


def test_async_invocations_retry_twice_then_go_to_the_dead_letter_queue(deployment: Deployment) -> None:
    config = deployment.one(INVOKE_CONFIG).inputs
    assert config["functionName"] == deployment.function.inputs["name"]
    assert config["maximumRetryAttempts"] == 2
    assert config["maximumEventAgeInSeconds"] == int(deployment.setting("maximumEventAgeSeconds"))
    dlq_arn = f"arn:aws:sqs:{deployment.region}:{ACCOUNT_ID}:{deployment.prefix}-blog-api-dlq"
    assert config["destinationConfig"]["onFailure"]["destination"] == dlq_arn


def test_log_group_has_the_lambda_name_and_a_retention(deployment: Deployment) -> None:
    group = next(g for g in deployment.of_type(LOG_GROUP) if g.name.endswith("-app-logs")).inputs
    assert group["name"] == f"/aws/lambda/{deployment.prefix}-blog-api"
    assert group["retentionInDays"] == int(deployment.setting("logRetentionDays"))
    assert deployment.function.inputs["loggingConfig"]["logGroup"] == group["name"]


def test_prod_reserves_concurrency_by_default_and_dev_uses_the_shared_pool(
    deployments: dict[str, Deployment],
) -> None:
    # prod: a cap on the database connections and the request units a burst of pushes can take
    assert deployments["prod"].function.inputs["reservedConcurrentExecutions"] == 20
    assert deployments["prod-custom"].function.inputs["reservedConcurrentExecutions"] == 40
    assert deployments["dev"].function.inputs["reservedConcurrentExecutions"] == -1


def test_committed_stacks_read_the_app_id_from_ssm_at_deploy_time(deployment: Deployment) -> None:
    assert deployment.setting("githubAppId") == ""
    assert deployment.environment["GITHUB_APP_ID"] == APP_ID_FROM_SSM
    (lookup,) = [c["args"] for c in deployment.invoke_args if c["args"].get("name", "").endswith("app-id")]
    assert (
        lookup["name"]
        == deployment.setting("githubAppIdParam")
        == f"/{deployment.prefix}/blog-api/github-app-id"
    )


def test_a_configured_app_id_is_used_without_reading_ssm(deployments: dict[str, Deployment]) -> None:
    custom = deployments["prod-custom"]
    assert custom.environment["GITHUB_APP_ID"] == "1000001"
    assert not [c for c in custom.invoke_args if c["args"].get("name", "").endswith("app-id")]


def test_log_group_is_imported_only_when_asked(deployments: dict[str, Deployment]) -> None:
    # The mock monitor records the import id as the resource's id input; a plain create has none.
    for scenario, imported in (("prod", False), ("prod-snapstart", True)):
        group = next(g for g in deployments[scenario].of_type(LOG_GROUP) if g.name.endswith("-logs"))
        assert (group.import_id == "/aws/lambda/p-st-blog-api") is imported, scenario


def test_dead_letter_queue_holds_the_largest_asynchronous_event(deployment: Deployment) -> None:
    # Lambda's on-failure record wraps the whole event; the accept path fills events up to the envelope's
    # budget, so the queue's message limit must be at least that plus the record around it.
    queue = deployment.one(QUEUE).inputs
    assert queue["maxMessageSize"] == 1_048_576 == DLQ_MAX_MESSAGE_SIZE
    assert queue["maxMessageSize"] >= PAYLOAD_BUDGET + ON_FAILURE_RECORD_BYTES
    assert queue["maxMessageSize"] >= ASYNC_INVOKE_PAYLOAD_LIMIT
