"""Hand-written fakes that record what happened (no patching of our own code)."""

from __future__ import annotations

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
