"""Hand-written fakes that record what happened (no patching of our own code)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from function.errors import PayloadTooLarge, Unavailable


class RecordingInvoker:
    """A SelfInvoker that keeps every payload; can be told to fail or to refuse big payloads."""

    def __init__(self, *, fail: bool = False, limit: int | None = None) -> None:
        self.payloads: list[bytes] = []
        self.fail = fail
        self.limit = limit

    def invoke(self, payload: bytes) -> None:
        if self.fail:
            raise Unavailable("could not queue the delivery (TooManyRequestsException)")
        if self.limit is not None and len(payload) > self.limit:
            raise PayloadTooLarge("Request must be smaller than the limit for Event invocation")
        self.payloads.append(payload)


class FakeClock:
    """Naive-UTC time that moves only when told to, or when something sleeps on it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime.now(UTC).replace(tzinfo=None, microsecond=0)
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.current += timedelta(seconds=seconds)

    def advance(self, delta: timedelta) -> None:
        self.current += delta


class FakeResolver:
    """A resolver whose answers the test decides, by host name; records every look-up. A list of
    answers is used one per look-up (the last one for ever after), as a rebinding DNS server would."""

    def __init__(self, answers: dict[str, list[str] | list[list[str]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        found = self.answers.get(host)
        if found is None:
            raise OSError(f"no such host: {host}")
        if found and isinstance(found[0], list):
            turn = min(self.asked.count(host) - 1, len(found) - 1)
            return list(found[turn])
        return [str(a) for a in found]
