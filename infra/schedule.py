"""A timer that invokes the function with a constant event: the automatic redelivery sweep."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from shared import names

# The exact event the function receives. A constant input (not EventBridge's own envelope, whose
# ``source`` is ``aws.events``) keeps serverless-wsgi's keep-warm shortcut from swallowing it.
SCHEDULED_EVENT = {"kind": names.SCHEDULED_REDELIVERY_KIND}


@dataclass
class ScheduleArgs:
    physical_prefix: str
    function_name: pulumi.Input[str]
    # The function's ARN, or its alias's (SnapStart) together with function_qualifier.
    function_arn: pulumi.Input[str]
    schedule_expression: str
    function_qualifier: str | None = None


class Schedule(pulumi.ComponentResource):
    """An EventBridge rule on ``schedule_expression`` targeting the function, and its invoke permission."""

    def __init__(self, name: str, args: ScheduleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Schedule", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        rule = aws.cloudwatch.EventRule(
            f"{name}-rule",
            name=f"{names.function_name(args.physical_prefix)}-redelivery",
            description="blog-api: redeliver failed GitHub App deliveries",
            schedule_expression=args.schedule_expression,
            opts=child,
        )
        aws.cloudwatch.EventTarget(
            f"{name}-target",
            rule=rule.name,
            arn=args.function_arn,
            input=json.dumps(SCHEDULED_EVENT),
            opts=child,
        )
        aws.lambda_.Permission(
            f"{name}-invoke-permission",
            action="lambda:InvokeFunction",
            function=args.function_name,
            qualifier=args.function_qualifier,
            principal="events.amazonaws.com",
            source_arn=rule.arn,
            opts=child,
        )
        self.rule_arn = rule.arn
        self.register_outputs({"ruleArn": rule.arn})
