"""Telling a person that an endpoint was disabled: the stack's alarm topic, or the log without one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)


class AlarmNotifier(Protocol):
    def notify(self, subject: str, message: str) -> None: ...


class LogAlarm:
    """No topic configured (local runs): the alarm is a warning in the log."""

    def notify(self, subject: str, message: str) -> None:
        log.warning("Alarm", extra={"subject": subject, "alarm": message})


class TopicAlarm:
    """Publishes to the SNS topic whose e-mail subscribers get every CloudWatch alarm of the stack.

    ``client`` builds the SNS client on first use (botocore, with the proxy settings): nothing is built
    unless an endpoint is disabled. A failure to publish is logged, never raised: the endpoint is
    disabled all the same, and the log line says so."""

    def __init__(self, topic_arn: str, client: Callable[[], Any]) -> None:
        self._topic_arn = topic_arn
        self._client = client

    def notify(self, subject: str, message: str) -> None:
        try:
            # SNS caps an e-mail subject at 100 characters.
            self._client().publish(TopicArn=self._topic_arn, Subject=subject[:100], Message=message)
        except Exception as exc:  # noqa: BLE001 - botocore's many errors: the log says which
            log.error(
                "Alarm not published",
                extra={"subject": subject, "alarm": message, "error": f"{type(exc).__name__}: {exc}"[:300]},
            )


def sns_client_factory(https_proxy: str | None, no_proxy: tuple[str, ...]) -> Callable[[], Any]:
    """The SNS client, built once on first call, with the function's time-outs and proxy rules."""
    built: list[Any] = []

    def client() -> Any:
        if not built:
            from function.aws import clients

            built.append(
                clients.client(
                    "sns",
                    connect_timeout=2,
                    read_timeout=5,
                    attempts=3,
                    https_proxy=https_proxy,
                    no_proxy=no_proxy,
                )
            )
        return built[0]

    return client
