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


def test_a_held_sync_tells_the_alarm_topic_and_no_front_end(topic: tuple[str, Any, str]) -> None:
    from function.services import Services
    from function.settings import Settings
    from function.worker.sync.mass_removal import MassRemoval
    from function.worker.sync.summary import SyncSummary

    arn, sqs, queue = topic
    services = Services(Settings(webhook_secret="s", alarm_topic_arn=arn))
    held = SyncSummary(held=MassRemoval("alice", going=134, served=134))

    told = services.after_sync(held, user_name="alice", delivery="d-1")

    assert told == []  # nothing changed for readers: no endpoint is told
    [message] = sqs.receive_message(QueueUrl=queue)["Messages"]
    published = json.loads(message["Body"])
    assert published["Subject"] == "blog-api: a sync of alice was held"
    assert published["Message"].startswith(
        "held: this sync would archive 134 of the 134 articles 'alice' serves"
    )
    assert "blog-api sync --user alice --confirm-removal" in published["Message"]
