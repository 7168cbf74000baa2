"""The receiver on loopback, a clock the tests move, and a dispatcher on the test's database."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from function.hooks.dispatch import HookDispatcher, HookTiming
from function.hooks.guard import AddressPolicy
from function.hooks.signing import new_secret
from function.hooks.transport import Transport
from function.store.facade import PeeweeStore
from function.store.hook_records import EndpointRecord
from function.store.hooks import HookStore
from function.store.records import UserRecord
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


class RecordingAlarm:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def notify(self, subject: str, message: str) -> None:
        self.sent.append((subject, message))


@dataclass
class Hub:
    """A dispatcher on the test's store, sending over loopback with short time-outs, on a fake clock."""

    store: PeeweeStore
    hooks: HookStore
    clock: FakeClock
    alarm: RecordingAlarm
    user: UserRecord
    dispatcher: HookDispatcher
    transport: Transport
    timing: HookTiming
    secrets: dict[str, str] = field(default_factory=dict)

    def add(self, url: str, events: tuple[str, ...] = ("articles.changed", "sync.failed")) -> EndpointRecord:
        secret = new_secret()
        endpoint = self.hooks.add_endpoint(self.user.id, url, events, secret, self.clock.now())
        self.secrets[endpoint.id] = secret
        return endpoint

    def change(self, *published: str, updated: tuple[str, ...] = (), source: str = "d-1") -> list[str]:
        return self.dispatcher.queue_changes(
            self.user.id,
            self.user.name,
            published=published,
            updated=updated,
            unpublished=(),
            head_sha="abc",
            source=source,
        )


@pytest.fixture
def hub(store: PeeweeStore, clock: FakeClock) -> Hub:
    user = store.users.add_user("alice", "alice@example.com", 101, "alice/blog")
    hooks = HookStore(store.db)
    alarm = RecordingAlarm()
    transport = Transport(AddressPolicy(allow_loopback=True), connect_timeout_s=0.5, total_timeout_s=1.0)
    timing = HookTiming(now=clock.now, sleep=clock.sleep)
    dispatcher = HookDispatcher(
        hooks,
        transport,
        timing=timing,
        rng=random.Random(7),
        alarm=alarm,
        site_url="https://blog.example.com",
    )
    return Hub(store, hooks, clock, alarm, user, dispatcher, transport, timing)
