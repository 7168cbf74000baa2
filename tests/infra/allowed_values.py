"""The values AWS accepts for the inputs the program sets, so a wrong enum fails a test, not a deploy.

The mocks accept anything (``log_format="text"`` registers fine and then fails in AWS), so each rule
here is taken from the provider's documentation of the input (pulumi-aws docstrings, which quote the AWS
API reference) and applied to every resource of the mocked runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pulumi_aws as aws

from infra.config import LOG_RETENTION_DAYS, SUPPORTED_RUNTIMES
from tests.infra import deployment as d

Rule = Callable[[Any], bool]


def one_of(*values: Any) -> Rule:
    allowed = set(values)
    return lambda value: value in allowed


def each(rule: Rule) -> Rule:
    return lambda value: isinstance(value, list) and all(rule(item) for item in value)


def between(low: float, high: float) -> Rule:
    return lambda value: (
        isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
    )


def boolean(value: Any) -> bool:
    return isinstance(value, bool)


LAMBDA_RUNTIMES = {runtime.value for runtime in aws.lambda_.Runtime}
COMPARISON_OPERATORS = one_of(
    "GreaterThanOrEqualToThreshold", "GreaterThanThreshold", "LessThanThreshold", "LessThanOrEqualToThreshold"
)
STATISTICS = one_of("SampleCount", "Average", "Sum", "Minimum", "Maximum")
# CloudWatch: 10, 20, 30 or any multiple of 60 seconds.
# (The mock monitor hands numbers back as floats.)
PERIOD: Rule = lambda value: (  # noqa: E731
    isinstance(value, int | float) and value == int(value) and (value in (10, 20, 30) or int(value) % 60 == 0)
)

# (resource type, dotted input path) → rule. "*" in a path means every item of a list.
RULES: dict[tuple[str, str], Rule] = {
    (d.FUNCTION, "runtime"): lambda v: v in LAMBDA_RUNTIMES and v in SUPPORTED_RUNTIMES,
    (d.FUNCTION, "architectures"): each(one_of("x86_64", "arm64")),
    (d.FUNCTION, "loggingConfig.logFormat"): one_of("Text", "JSON"),
    (d.FUNCTION, "memorySize"): between(128, 10240),
    (d.FUNCTION, "timeout"): between(1, 900),
    (d.FUNCTION, "reservedConcurrentExecutions"): lambda v: v == -1 or between(0, 10000)(v),
    (d.FUNCTION, "publish"): boolean,
    (d.FUNCTION, "snapStart.applyOn"): one_of("PublishedVersions", "None"),
    (d.INVOKE_CONFIG, "maximumRetryAttempts"): between(0, 2),
    (d.INVOKE_CONFIG, "maximumEventAgeInSeconds"): between(60, 21600),
    (d.PERMISSION, "action"): one_of("lambda:InvokeFunction"),
    (d.QUEUE, "messageRetentionSeconds"): between(60, 1209600),
    (d.LOG_GROUP, "retentionInDays"): one_of(*LOG_RETENTION_DAYS),
    (d.ALARM, "comparisonOperator"): COMPARISON_OPERATORS,
    (d.ALARM, "statistic"): STATISTICS,
    (d.ALARM, "treatMissingData"): one_of("missing", "ignore", "breaching", "notBreaching"),
    (d.ALARM, "period"): PERIOD,
    (d.ALARM, "evaluationPeriods"): between(1, 100),
    (d.SUBSCRIPTION, "protocol"): one_of(
        "sqs", "sms", "lambda", "firehose", "application", "email", "email-json", "http", "https"
    ),
    (d.HTTP_API, "protocolType"): one_of("HTTP", "WEBSOCKET"),
    (d.INTEGRATION, "integrationType"): one_of("AWS", "AWS_PROXY", "HTTP", "HTTP_PROXY", "MOCK"),
    (d.INTEGRATION, "payloadFormatVersion"): one_of("1.0", "2.0"),
    (d.DOMAIN, "domainNameConfiguration.endpointType"): one_of("REGIONAL"),
    (d.DOMAIN, "domainNameConfiguration.securityPolicy"): one_of("TLS_1_2"),
    (d.VPC_ENDPOINT, "vpcEndpointType"): one_of(
        "Gateway", "GatewayLoadBalancer", "Interface", "Resource", "ServiceNetwork"
    ),
    (d.NAT_GATEWAY, "connectivityType"): one_of("public", "private"),
    (d.EIP, "domain"): one_of("vpc", "standard"),
    (d.INSTANCE, "metadataOptions.httpTokens"): one_of("optional", "required"),
    (d.SECURITY_GROUP, "ingress.*.protocol"): one_of("-1", "tcp", "udp", "icmp", "icmpv6"),
    (d.SECURITY_GROUP, "egress.*.protocol"): one_of("-1", "tcp", "udp", "icmp", "icmpv6"),
    (d.KMS_KEY, "deletionWindowInDays"): between(7, 30),
}


def values_at(inputs: Any, path: str) -> Iterable[Any]:
    """Every value at ``path`` (dotted; ``*`` for list items); nothing when the input is not set."""
    head, _, rest = path.partition(".")
    if head == "*":
        items = inputs if isinstance(inputs, list) else []
    else:
        items = [inputs[head]] if isinstance(inputs, dict) and head in inputs else []
    for item in items:
        if rest:
            yield from values_at(item, rest)
        else:
            yield item


def violations(resources: Iterable[d.Resource]) -> list[str]:
    """One line per input value AWS would refuse."""
    found = []
    for resource in resources:
        for (type_, path), rule in RULES.items():
            if resource.type != type_:
                continue
            for value in values_at(resource.inputs, path):
                if not rule(value):
                    found.append(f"{resource.name}: {path} = {value!r}")
    return found
