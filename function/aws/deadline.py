"""A delivery's time budget: when the Lambda invocation that runs it will be stopped.

Built from the Lambda context's remaining time when the event arrives, and passed down (handler →
pass-through request → worker) as an argument, so the worker can stop starting work it cannot finish
and say what it left. The clock is passed in, so tests run it on a fake clock instead of sleeping.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

Monotonic = Callable[[], float]


class Deadline:
    """A point on a monotonic clock (``None``: no limit, as for the CLI and local runs)."""

    def __init__(self, at: float | None, clock: Monotonic = time.monotonic) -> None:
        self._at = at
        self._clock = clock

    @classmethod
    def after(cls, seconds: float, clock: Monotonic = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    @classmethod
    def from_lambda_context(cls, context: object, clock: Monotonic = time.monotonic) -> Deadline:
        """The invocation's end, from ``context.get_remaining_time_in_millis()``; no limit for a
        context without it (a local call of the handler)."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if not callable(remaining):
            return UNLIMITED
        try:
            millis = float(remaining())
        except (TypeError, ValueError):
            return UNLIMITED
        return cls.after(millis / 1000, clock)

    @property
    def limited(self) -> bool:
        return self._at is not None

    def remaining(self) -> float:
        """Seconds left (``inf`` without a limit; negative once past)."""
        if self._at is None:
            return math.inf
        return self._at - self._clock()

    def allows(self, seconds: float) -> bool:
        """Whether ``seconds`` of work still fit before the deadline."""
        return self.remaining() >= seconds

    def __repr__(self) -> str:
        return "Deadline(unlimited)" if self._at is None else f"Deadline(remaining={self.remaining():.1f}s)"


UNLIMITED = Deadline(None)
