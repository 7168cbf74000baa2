"""When a webhook that got no 2xx is tried again, and when an endpoint is given up on.

Seven attempts over about a day: at once, then after 5 s, 1 min, 10 min, 1 h, 6 h and 12 h (each
± 20 %, so endpoints that failed together are not all retried in the same second). The first retry
runs within the invocation that sent the first attempt; the later ones are due at those times and run
at the scheduled sweep that follows. An endpoint with no successful attempt for 3 days is disabled.
"""

from __future__ import annotations

import random
from datetime import timedelta

RETRY_DELAYS = (
    timedelta(seconds=5),
    timedelta(minutes=1),
    timedelta(minutes=10),
    timedelta(hours=1),
    timedelta(hours=6),
    timedelta(hours=12),
)
ATTEMPTS = len(RETRY_DELAYS) + 1
JITTER = 0.2
# An endpoint whose attempts all failed for this long (from its first failure since its last success)
# is disabled, and the alarm topic told.
DISABLE_AFTER = timedelta(days=3)
# A retry due this soon is waited for inside the invocation (when its time budget allows), not left
# to the sweep: the 5 s one, jitter included.
WAIT_IN_PLACE_MAX = timedelta(seconds=10)


def retry_delay(attempts_made: int, rng: random.Random) -> timedelta | None:
    """How long after the ``attempts_made``-th failed attempt the next one is due; None after the last."""
    if not 1 <= attempts_made <= len(RETRY_DELAYS):
        return None
    base = RETRY_DELAYS[attempts_made - 1]
    return base * rng.uniform(1 - JITTER, 1 + JITTER)
