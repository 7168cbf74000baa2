"""Alarms that reach a person: one SNS topic per stack, e-mail subscriptions, and every alarm notifying it.

What each alarm means for a delivery:

- ``errors``: the function failed (5xx from /events, a crash, a time-out); Lambda will retry.
- ``throttles``: Lambda refused to run it (concurrency): GitHub gets 5xx, or the worker is delayed.
- ``destination-delivery-failures``: an event that exhausted its retries could not even be written to
  the dead-letter queue: that event is lost.
- ``dlq-depth``: events that failed every retry wait in the dead-letter queue.
- ``dlq-age``: they have waited long; the queue drops them after 14 days.
- ``processing-errors``: the worker's own metric, one per push attempt whose processing raised: a failure
  for good (a 4xx such as an unknown installation, which Lambda counts as no error and never retries) as
  well as one Lambda retries (GitHub or the database unavailable, which ``errors`` counts too).
- ``api-5xx``: the HTTP API answered 5xx (the function failed on the accept path, or could not be invoked).
- ``nat-status-check`` (NAT instance only): the instance or its host fails EC2's status checks, or reports
  nothing at all (stopped, or powered off by its own failed setup): the function has no way out.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from shared import metric_names, names

PERIOD_SECONDS = 300
# Two days: long enough not to repeat the depth alarm for a fresh failure, and twelve days before the
# queue's 14-day retention drops the message.
DLQ_AGE_THRESHOLD_SECONDS = 2 * 24 * 3600


@dataclass
class AlarmsArgs:
    physical_prefix: str
    stack: str
    emails: tuple[str, ...]
    function_name: pulumi.Input[str]
    dead_letter_queue_name: pulumi.Input[str]
    api_id: pulumi.Input[str]
    api_stage: pulumi.Input[str]
    # The NAT instance whose status checks are watched (None: no NAT instance).
    nat_instance_id: pulumi.Input[str] | None = None


@dataclass(frozen=True)
class AlarmSpec:
    """One CloudWatch alarm: a metric crossing a threshold within one period."""

    suffix: str
    description: str
    namespace: str
    metric: str
    dimensions: dict[str, pulumi.Input[str]]
    statistic: str = "Sum"
    threshold: float = 0
    # Whether no data points mean "fine" (nothing happened) or "failing" (nothing is reporting).
    treat_missing_data: str = "notBreaching"


def alarm_specs(args: AlarmsArgs) -> list[AlarmSpec]:
    function = {"FunctionName": args.function_name}
    queue = {"QueueName": args.dead_letter_queue_name}
    specs = [
        AlarmSpec("errors", "The function failed (5xx from /events, crash, time-out).", "AWS/Lambda",
                  "Errors", function),
        AlarmSpec("throttles", "Lambda throttled the function: deliveries got 5xx or waited.", "AWS/Lambda",
                  "Throttles", function),
        AlarmSpec("destination-delivery-failures",
                  "Events that exhausted their retries could not be sent to the dead-letter queue: lost.",
                  "AWS/Lambda", "DestinationDeliveryFailures", function),
        AlarmSpec("dlq-depth", "Events that failed every retry are waiting in the dead-letter queue.",
                  "AWS/SQS", "ApproximateNumberOfMessagesVisible", queue, statistic="Maximum"),
        AlarmSpec("dlq-age", "A dead-letter message has waited 2 days; the queue drops it after 14.",
                  "AWS/SQS", "ApproximateAgeOfOldestMessage", queue, statistic="Maximum",
                  threshold=DLQ_AGE_THRESHOLD_SECONDS),
        AlarmSpec("processing-errors", "Push attempts that raised (unknown installation, GitHub/DB down).",
                  metric_names.NAMESPACE, metric_names.PROCESSING_ERRORS,
                  {metric_names.DIMENSION_FUNCTION: args.function_name}),
        AlarmSpec("api-5xx", "The HTTP API answered 5xx.", "AWS/ApiGateway", "5xx",
                  {"ApiId": args.api_id, "Stage": args.api_stage}),
    ]  # fmt: skip
    if args.nat_instance_id is not None:
        specs.append(
            AlarmSpec(
                "nat-status-check",
                "The NAT instance fails its status checks or reports nothing: no way out for the function.",
                "AWS/EC2",
                "StatusCheckFailed",
                {"InstanceId": args.nat_instance_id},
                statistic="Maximum",
                treat_missing_data="breaching",
            )
        )
    return specs


class Alarms(pulumi.ComponentResource):
    """The topic ``<prefix>-blog-api-alarms``, its e-mail subscriptions and the alarms that notify it."""

    topic_arn: pulumi.Output[str]

    def __init__(self, name: str, args: AlarmsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Alarms", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        base = names.function_name(args.physical_prefix)

        # No server-side encryption: CloudWatch cannot publish to a topic under the aws/sns key, and an
        # alarm's text holds no secret.
        topic = aws.sns.Topic(f"{name}-topic", name=names.alarm_topic_name(args.physical_prefix), opts=child)
        for index, email in enumerate(args.emails):
            # AWS mails a confirmation link; until it is followed the subscription stays pending.
            aws.sns.TopicSubscription(
                f"{name}-email-{index}", topic=topic.arn, protocol="email", endpoint=email, opts=child
            )
        if not args.emails:
            pulumi.log.warn(
                f"{names.PROJECT}:alarmEmails is empty: the alarms notify the topic {base}-alarms, which "
                f"nobody is subscribed to; fix: pulumi config set {names.PROJECT}:alarmEmails "
                f"'[\"you@your-domain\"]' --stack {args.stack}"
            )

        for spec in alarm_specs(args):
            aws.cloudwatch.MetricAlarm(
                f"{name}-{spec.suffix}",
                name=f"{base}-{spec.suffix}",
                alarm_description=spec.description,
                namespace=spec.namespace,
                metric_name=spec.metric,
                dimensions=spec.dimensions,
                statistic=spec.statistic,
                period=PERIOD_SECONDS,
                evaluation_periods=1,
                threshold=spec.threshold,
                comparison_operator="GreaterThanThreshold",
                # No data points means nothing happened (no errors, an empty queue), except for the NAT.
                treat_missing_data=spec.treat_missing_data,
                alarm_actions=[topic.arn],
                # The all-clear too, so whoever was paged knows it is over.
                ok_actions=[topic.arn],
                opts=child,
            )

        self.topic_arn = topic.arn
        self.register_outputs({"topicArn": topic.arn})
