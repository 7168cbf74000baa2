"""Which part of a write a database error came from ("writing tags", "archiving articles").

A driver's message alone ("parser stack overflow", "Duplicate entry ...") does not tell a user what
failed or what is left; the store notes the step on the error as it passes, and whoever reports the
error (the worker's delivery record, the CLI) says it in words. The error keeps its type, so what is
retryable (a dropped connection) stays retryable.
"""

from __future__ import annotations

from function.store.driver_errors import error_chain

_ATTRIBUTE = "store_step"


def note_step(exc: BaseException, step: str) -> None:
    """Record on ``exc`` the step it failed in, unless an inner, more precise one already did."""
    if step_of(exc) is None:
        setattr(exc, _ATTRIBUTE, step)


def step_of(exc: BaseException) -> str | None:
    """The step noted on ``exc`` or on any error it wraps (Peewee's, the store's translation)."""
    for err in error_chain(exc):
        step = getattr(err, _ATTRIBUTE, None)
        if isinstance(step, str):
            return step
    return None
