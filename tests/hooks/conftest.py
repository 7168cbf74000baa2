"""The receiver on loopback, a clock and a resolver the tests control."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kit.fakes import FakeClock
from tests.kit.webhook_receiver import WebhookReceiver


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    """A front end's receiver on loopback over http (the sender is outside Lambda mode)."""
    running = WebhookReceiver().start()
    yield running
    running.stop()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
