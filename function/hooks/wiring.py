"""The outgoing webhooks' collaborators, from the settings: the guarded transport and the alarm."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from function.hooks.alarm import AlarmNotifier, LogAlarm, TopicAlarm, sns_client_factory
from function.hooks.dispatch import HookDispatcher, HookTiming
from function.hooks.guard import AddressPolicy
from function.hooks.transport import Transport
from function.ogp.images import OgpImages, ogp_images
from function.store.hooks import HookStore


@dataclass
class HookParts:
    """What every job's dispatcher shares; tests pass their own (a loopback policy, a fake clock)."""

    transport: Transport
    timing: HookTiming = field(default_factory=HookTiming)
    alarm: AlarmNotifier = field(default_factory=LogAlarm)
    rng: random.Random | None = None
    ogp: OgpImages = field(default_factory=OgpImages)  # each article's share image, as the API serves it


def parts_from_settings(settings: Any) -> HookParts:
    """On Lambda no loopback address may be called (nor http at all); locally, loopback may. The
    outbound proxy is the one the rest of the function uses; the alarm is the stack's topic."""
    policy = AddressPolicy(allow_loopback=not settings.lambda_mode)
    transport = Transport(policy, https_proxy=settings.https_proxy, no_proxy=settings.no_proxy)
    alarm: AlarmNotifier = LogAlarm()
    if settings.alarm_topic_arn:
        alarm = TopicAlarm(
            settings.alarm_topic_arn, sns_client_factory(settings.https_proxy, settings.no_proxy)
        )
    return HookParts(transport, alarm=alarm, ogp=ogp_images(settings))


def dispatcher(parts: HookParts, hooks: HookStore, site_url: str | None) -> HookDispatcher:
    """A dispatcher on a job's store (``store.hooks``: the job's database connection)."""
    return HookDispatcher(
        hooks,
        parts.transport,
        timing=parts.timing,
        rng=parts.rng,
        alarm=parts.alarm,
        site_url=site_url,
        ogp=parts.ogp,
    )
