"""The alarm topic told of a disabled endpoint: SNS under moto, read back from a subscribed queue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from function.hooks.alarm import TopicAlarm, sns_client_factory

REGION = "us-east-1"


@pytest.fixture
def topic(aws_env: None) -> Iterator[tuple[str, Any, str]]:
    with mock_aws():
        sns = boto3.client("sns", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        arn = sns.create_topic(Name="d-st-blog-api-alarms")["TopicArn"]
        queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn)
        yield arn, sqs, queue


def test_a_disabled_endpoint_is_published_to_the_alarm_topic(topic: tuple[str, Any, str]) -> None:
    arn, sqs, queue = topic
    TopicAlarm(arn, sns_client_factory(None, ())).notify(
        "blog-api: webhook endpoint ep_1 disabled", "details"
    )

    [message] = sqs.receive_message(QueueUrl=queue)["Messages"]
    published = json.loads(message["Body"])
    assert (published["Subject"], published["Message"]) == (
        "blog-api: webhook endpoint ep_1 disabled",
        "details",
    )


def test_a_topic_that_cannot_be_published_to_is_logged_not_raised(
    topic: tuple[str, Any, str], caplog: pytest.LogCaptureFixture
) -> None:
    missing = topic[0].replace("d-st-blog-api-alarms", "no-such-topic")
    TopicAlarm(missing, sns_client_factory(None, ())).notify("subject", "message")
    [line] = [r for r in caplog.records if r.getMessage() == "Alarm not published"]
    assert "NotFound" in vars(line)["error"]
