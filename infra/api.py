"""The public entry: an API Gateway HTTP API whose ``$default`` route sends every request to the function."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from shared import names

# Payload format 2.0: the HTTP API event that serverless-wsgi understands natively.
PAYLOAD_FORMAT_VERSION = "2.0"
STAGE_NAME = "$default"
# One JSON object per request. No headers and no body: a delivery's signature and payload stay out of
# the logs; the request id matches the function's own log lines.
ACCESS_LOG_FORMAT = json.dumps(
    {
        "requestId": "$context.requestId",
        "requestTime": "$context.requestTime",
        "ip": "$context.identity.sourceIp",
        "method": "$context.httpMethod",
        "path": "$context.path",
        "status": "$context.status",
        "responseLength": "$context.responseLength",
        "latencyMs": "$context.responseLatency",
        "integrationStatus": "$context.integrationStatus",
        "integrationError": "$context.integrationErrorMessage",
    },
    separators=(",", ":"),
)


@dataclass
class ApiArgs:
    physical_prefix: str
    function_name: pulumi.Input[str]
    function_invoke_arn: pulumi.Input[str]
    access_log_retention_days: int
    # The alias the API invokes (SnapStart), or None for the unqualified function.
    function_qualifier: str | None = None
    custom_domain_name: str | None = None
    custom_domain_certificate_arn: str | None = None
    # Stage-wide throttle (requests per second, and at once); the defaults are StackConfig's.
    throttling_rate_limit: int = 25
    throttling_burst_limit: int = 50


class Api(pulumi.ComponentResource):
    """The HTTP API, its invoke permission and, optionally, a custom domain mapped to it."""

    url: pulumi.Output[str]
    webhook_url: pulumi.Output[str]
    api_id: pulumi.Output[str]
    stage_name: str

    def __init__(self, name: str, args: ApiArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Api", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        api = aws.apigatewayv2.Api(
            f"{name}-http-api",
            name=names.function_name(args.physical_prefix),
            protocol_type="HTTP",
            opts=child,
        )
        integration = aws.apigatewayv2.Integration(
            f"{name}-lambda-integration",
            api_id=api.id,
            integration_type="AWS_PROXY",
            integration_uri=args.function_invoke_arn,
            payload_format_version=PAYLOAD_FORMAT_VERSION,
            opts=child,
        )
        # One catch-all route: Flask does the routing, so adding an endpoint needs no infra change.
        route = aws.apigatewayv2.Route(
            f"{name}-default-route",
            api_id=api.id,
            route_key="$default",
            target=pulumi.Output.concat("integrations/", integration.id),
            opts=child,
        )
        access_logs = aws.cloudwatch.LogGroup(
            f"{name}-access-logs",
            name=f"/aws/apigateway/{names.function_name(args.physical_prefix)}",
            retention_in_days=args.access_log_retention_days,
            opts=child,
        )
        stage = aws.apigatewayv2.Stage(
            f"{name}-default-stage",
            api_id=api.id,
            name=STAGE_NAME,
            auto_deploy=True,
            access_log_settings=aws.apigatewayv2.StageAccessLogSettingsArgs(
                destination_arn=access_logs.arn, format=ACCESS_LOG_FORMAT
            ),
            # Every route, the catch-all included: over this API Gateway answers 429 itself.
            default_route_settings=aws.apigatewayv2.StageDefaultRouteSettingsArgs(
                throttling_rate_limit=args.throttling_rate_limit,
                throttling_burst_limit=args.throttling_burst_limit,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[route]),
        )
        aws.lambda_.Permission(
            f"{name}-invoke-permission",
            action="lambda:InvokeFunction",
            function=args.function_name,
            qualifier=args.function_qualifier,
            principal="apigateway.amazonaws.com",
            # Any stage and route of this API only, not of every API in the account.
            source_arn=pulumi.Output.concat(api.execution_arn, "/*/*"),
            opts=child,
        )

        url: pulumi.Output[str] = api.api_endpoint
        if args.custom_domain_name and args.custom_domain_certificate_arn:
            domain = aws.apigatewayv2.DomainName(
                f"{name}-domain",
                domain_name=args.custom_domain_name,
                domain_name_configuration=aws.apigatewayv2.DomainNameDomainNameConfigurationArgs(
                    certificate_arn=args.custom_domain_certificate_arn,
                    endpoint_type="REGIONAL",
                    security_policy="TLS_1_2",
                ),
                opts=child,
            )
            aws.apigatewayv2.ApiMapping(
                f"{name}-domain-mapping",
                api_id=api.id,
                domain_name=domain.id,
                stage=stage.id,
                opts=child,
            )
            url = pulumi.Output.from_input(f"https://{args.custom_domain_name}")

        self.url = url
        self.api_id = api.id
        self.stage_name = STAGE_NAME
        self.webhook_url = pulumi.Output.concat(url, names.WEBHOOK_ROUTE)
        self.register_outputs({"url": self.url, "webhookUrl": self.webhook_url})
