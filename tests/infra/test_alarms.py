"""Alarms reach a person: every alarm notifies the stack's topic, which e-mails the configured addresses."""

from __future__ import annotations

from tests.infra.conftest import ALARM_EMAILS
from tests.infra.deployment import ALARM, HTTP_API, INSTANCE, STAGE, SUBSCRIPTION, TOPIC, Deployment

EXPECTED = {
    # suffix: (namespace, metric, statistic, threshold)
    "errors": ("AWS/Lambda", "Errors", "Sum", 0),
    "throttles": ("AWS/Lambda", "Throttles", "Sum", 0),
    "destination-delivery-failures": ("AWS/Lambda", "DestinationDeliveryFailures", "Sum", 0),
    "dlq-depth": ("AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", 0),
    "dlq-age": ("AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum", 2 * 24 * 3600),
    "processing-errors": ("blog-api", "ProcessingErrors", "Sum", 0),
    "api-5xx": ("AWS/ApiGateway", "5xx", "Sum", 0),
}
# Only where a NAT instance is the way out (dev).
NAT_ALARM = {"nat-status-check": ("AWS/EC2", "StatusCheckFailed", "Maximum", 0)}


def expected(deployment: Deployment) -> dict[str, tuple[str, str, str, int]]:
    return {**EXPECTED, **(NAT_ALARM if deployment.of_type(INSTANCE) else {})}


def alarms(deployment: Deployment) -> dict[str, dict]:
    base = f"{deployment.prefix}-blog-api-"
    return {a.inputs["name"].removeprefix(base): a.inputs for a in deployment.of_type(ALARM)}


def test_one_topic_per_stack_and_every_alarm_notifies_it(deployment: Deployment) -> None:
    topic = deployment.one(TOPIC)
    topic_arn = f"arn:aws:sns:ap-northeast-1:123456789012:{deployment.prefix}-blog-api-alarms"
    assert topic.inputs["name"] == f"{deployment.prefix}-blog-api-alarms"
    found = alarms(deployment)
    assert set(found) == set(expected(deployment))
    for suffix, alarm in found.items():
        assert alarm["alarmActions"] == [topic_arn], suffix
        assert alarm["okActions"] == [topic_arn], suffix


def test_each_alarm_watches_the_right_metric_of_this_stack(deployment: Deployment) -> None:
    function = {"FunctionName": f"{deployment.prefix}-blog-api"}
    queue = {"QueueName": f"{deployment.prefix}-blog-api-dlq"}
    api = {"ApiId": deployment.one(HTTP_API).id, "Stage": deployment.one(STAGE).inputs["name"]}
    dimensions = {
        "errors": function,
        "throttles": function,
        "destination-delivery-failures": function,
        "processing-errors": function,
        "dlq-depth": queue,
        "dlq-age": queue,
        "api-5xx": api,
    }
    for instance in deployment.of_type(INSTANCE):
        dimensions["nat-status-check"] = {"InstanceId": instance.id}
    for suffix, alarm in alarms(deployment).items():
        namespace, metric, statistic, threshold = expected(deployment)[suffix]
        assert (alarm["namespace"], alarm["metricName"], alarm["statistic"]) == (namespace, metric, statistic)
        assert alarm["threshold"] == threshold, suffix
        assert alarm["comparisonOperator"] == "GreaterThanThreshold", suffix
        assert alarm["dimensions"] == dimensions[suffix], suffix
        # A NAT instance that reports nothing (stopped, or powered off by a failed setup) is failing.
        missing = "breaching" if suffix == "nat-status-check" else "notBreaching"
        assert alarm["treatMissingData"] == missing, suffix


def test_the_nat_instance_status_check_alarm_notifies_the_topic(dev: Deployment, prod: Deployment) -> None:
    assert "nat-status-check" in alarms(dev)
    assert dev.one(INSTANCE).id == "i-0123456789abcdef0"
    assert "nat-status-check" not in alarms(prod)  # a NAT gateway: no instance to watch


def test_without_emails_nobody_is_subscribed_and_the_run_warns(deployment: Deployment) -> None:
    assert deployment.setting("alarmEmails") == "[]"
    assert deployment.of_type(SUBSCRIPTION) == []
    (warning,) = [w for w in deployment.warnings if "alarmEmails" in w]
    assert "pulumi config set blog-api:alarmEmails" in warning
    assert f"--stack {deployment.stack}" in warning


def test_each_configured_email_gets_a_subscription(deployments: dict[str, Deployment]) -> None:
    custom = deployments["prod-custom"]
    topic_arn = custom.one(TOPIC).inputs["name"]
    subscriptions = [s.inputs for s in custom.of_type(SUBSCRIPTION)]
    assert sorted(s["endpoint"] for s in subscriptions) == sorted(ALARM_EMAILS)
    assert {s["protocol"] for s in subscriptions} == {"email"}
    assert all(s["topic"].endswith(f":{topic_arn}") for s in subscriptions)
    assert not [w for w in custom.warnings if "alarmEmails" in w]
