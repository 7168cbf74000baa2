"""The outgoing webhooks need no resource of their own: the schedule that redelivers GitHub's pushes
carries their retries, and the function may publish to the alarm topic. Checked on the program's values."""

from __future__ import annotations

import re
from datetime import timedelta

from function.hooks import backoff
from function.hooks.dispatch import MARGIN_S
from function.hooks.transport import TOTAL_TIMEOUT_S
from shared import names
from tests.infra.conftest import ACCOUNT_ID
from tests.infra.deployment import EVENT_RULE, TOPIC, Deployment, resources_of

_RATE = re.compile(r"rate\((\d+) (minute|minutes|hour|hours|day|days)\)")


def schedule_period(expression: str) -> timedelta:
    match = _RATE.fullmatch(expression)
    assert match, f"not a rate() expression: {expression}"
    unit = match.group(2).rstrip("s") + "s"
    return timedelta(**{unit: int(match.group(1))})


def latest_last_attempt(period: timedelta) -> timedelta:
    """When an event's last attempt happens at the latest: the first retry in place, every later one at
    the first sweep after it is due (each delay at its longest jitter)."""
    at = backoff.RETRY_DELAYS[0] * (1 + backoff.JITTER)
    for delay in backoff.RETRY_DELAYS[1:]:
        at += delay * (1 + backoff.JITTER) + period
    return at


def test_the_schedule_carries_every_retry_within_about_a_day(deployments: dict[str, Deployment]) -> None:
    scheduled = deployments["dev-scheduled"]
    period = schedule_period(scheduled.one(EVENT_RULE).inputs["scheduleExpression"])

    last = latest_last_attempt(period)

    # About a day, and well inside the three days after which a failing endpoint is disabled: an
    # endpoint is only disabled after events that were really tried.
    assert last <= timedelta(hours=30), last
    assert last < backoff.DISABLE_AFTER


def test_the_invocation_that_synced_can_wait_for_the_first_retry(deployment: Deployment) -> None:
    # The worker's invocation sends the first attempt and, after 5 s, the first retry itself.
    needed = backoff.WAIT_IN_PLACE_MAX.total_seconds() + 2 * (TOTAL_TIMEOUT_S + MARGIN_S)
    assert deployment.function.inputs["timeout"] >= needed


def test_the_function_may_publish_to_the_alarm_topic_and_knows_its_arn(deployment: Deployment) -> None:
    topic = deployment.one(TOPIC)
    arn = f"arn:aws:sns:{deployment.region}:{ACCOUNT_ID}:{topic.inputs['name']}"
    assert topic.inputs["name"] == names.alarm_topic_name(deployment.prefix)

    (statement,) = deployment.statements("sns:Publish")
    assert resources_of(statement) == [arn]
    assert deployment.environment["ALARM_TOPIC_ARN"] == arn
