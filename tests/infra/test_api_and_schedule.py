"""The HTTP API in front of the function, the optional custom domain, the optional schedule, the outputs."""

from __future__ import annotations

import json

from shared import names
from tests.infra.conftest import CERTIFICATE_ARN, CUSTOM_DOMAIN
from tests.infra.deployment import (
    API_MAPPING,
    DOMAIN,
    EVENT_RULE,
    EVENT_TARGET,
    HTTP_API,
    INTEGRATION,
    LOG_GROUP,
    PERMISSION,
    ROUTE,
    STAGE,
    Deployment,
)


def test_http_api_proxies_every_route_to_the_function_with_payload_2(deployment: Deployment) -> None:
    api = deployment.one(HTTP_API)
    assert api.inputs["protocolType"] == "HTTP"
    assert api.inputs["name"] == f"{deployment.prefix}-blog-api"
    integration = deployment.one(INTEGRATION).inputs
    assert integration["integrationType"] == "AWS_PROXY"
    assert integration["payloadFormatVersion"] == "2.0"
    assert integration["integrationUri"].endswith(f":function:{deployment.prefix}-blog-api/invocations")
    route = deployment.one(ROUTE).inputs
    assert route["routeKey"] == "$default"
    assert route["target"] == f"integrations/{deployment.one(INTEGRATION).id}"
    stage = deployment.one(STAGE).inputs
    assert (stage["name"], stage["autoDeploy"]) == ("$default", True)


def test_api_access_logs_go_to_a_group_with_retention_and_hold_no_headers(deployment: Deployment) -> None:
    stage = deployment.one(STAGE).inputs
    group = next(g for g in deployment.of_type(LOG_GROUP) if g.name.endswith("-access-logs")).inputs
    assert group["name"] == f"/aws/apigateway/{deployment.prefix}-blog-api"
    assert group["retentionInDays"] == int(deployment.setting("apiAccessLogRetentionDays"))
    settings = stage["accessLogSettings"]
    assert settings["destinationArn"] == f"arn:aws:logs:ap-northeast-1:123456789012:log-group:{group['name']}"
    fields = json.loads(settings["format"])
    assert {"requestId", "status", "ip", "path", "integrationError"} <= set(fields)
    assert not [v for v in fields.values() if "header" in v.lower() or "body" in v.lower()]


def test_the_stage_is_throttled_so_a_crawler_cannot_take_every_connection(deployment: Deployment) -> None:
    settings = deployment.one(STAGE).inputs["defaultRouteSettings"]
    assert (settings["throttlingRateLimit"], settings["throttlingBurstLimit"]) == (25, 50)


def test_api_gateway_may_invoke_the_function_from_this_api_only(deployment: Deployment) -> None:
    (permission,) = [
        p.inputs for p in deployment.of_type(PERMISSION) if p.inputs["principal"].startswith("apigateway")
    ]
    assert permission["action"] == "lambda:InvokeFunction"
    assert permission["function"] == f"{deployment.prefix}-blog-api"
    assert permission["sourceArn"] == "arn:aws:execute-api:ap-northeast-1:123456789012:a1b2c3d4e5/*/*"


def test_outputs_name_the_function_and_the_urls(deployment: Deployment) -> None:
    outputs = deployment.outputs
    assert set(outputs) == {
        "functionName", "functionArn", "apiUrl", "webhookUrl", "vpcId", "privateSubnetIds", "assetDomain",
    }  # fmt: skip
    assert outputs["functionName"] == f"{deployment.prefix}-blog-api"
    assert outputs["apiUrl"] == "https://a1b2c3d4e5.execute-api.ap-northeast-1.amazonaws.com"
    assert (
        outputs["webhookUrl"]
        == outputs["apiUrl"] + names.WEBHOOK_ROUTE
        == outputs["apiUrl"] + "/webhooks/github"
    )


def test_custom_domain_is_mapped_and_becomes_the_api_url(deployments: dict[str, Deployment]) -> None:
    assert deployments["prod"].of_type(DOMAIN) == []
    custom = deployments["prod-custom"]
    domain = custom.one(DOMAIN).inputs
    assert domain["domainName"] == CUSTOM_DOMAIN
    assert domain["domainNameConfiguration"]["certificateArn"] == CERTIFICATE_ARN
    assert custom.one(API_MAPPING).inputs["apiId"] == custom.one(HTTP_API).id
    assert custom.outputs["webhookUrl"] == f"https://{CUSTOM_DOMAIN}/webhooks/github"


def test_schedule_is_off_by_default(deployment: Deployment) -> None:
    assert deployment.setting("scheduleEnabled") == "false"
    assert deployment.of_type(EVENT_RULE) == [] and deployment.of_type(EVENT_TARGET) == []


def test_switched_on_schedule_invokes_the_function_with_the_constant_event(
    deployments: dict[str, Deployment],
) -> None:
    scheduled = deployments["dev-scheduled"]
    rule = scheduled.one(EVENT_RULE)
    assert rule.inputs["name"] == "d-st-blog-api-redelivery"
    assert rule.inputs["scheduleExpression"] == scheduled.setting("scheduleExpression")
    target = scheduled.one(EVENT_TARGET).inputs
    assert target["arn"] == scheduled.outputs["functionArn"]
    assert json.loads(target["input"]) == {"kind": "scheduled-redelivery"}
    assert json.loads(target["input"]) == {"kind": names.SCHEDULED_REDELIVERY_KIND}
    (permission,) = [
        p.inputs for p in scheduled.of_type(PERMISSION) if p.inputs["principal"].startswith("events")
    ]
    assert permission["function"] == "d-st-blog-api"
    assert permission["sourceArn"] == f"arn:aws:events:ap-northeast-1:123456789012:rule/{rule.inputs['name']}"
