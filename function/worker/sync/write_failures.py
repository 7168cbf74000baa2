"""A failed write of a sync, in words: the step and chunk it failed in, that it was rolled back, and
what the sync committed before it (what readers are served now).

The store notes the step on the error (``function.store.steps``); the worker knows the chunk and what
it committed. Together they replace the driver's bare message ("parser stack overflow") with a line a
user can act on, in the CLI's error and in the delivery record alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from function.errors import DatabaseUnavailable, StoreStepFailed
from function.store.steps import cause, step_of


@dataclass(frozen=True)
class WritePosition:
    """Where in a sync a transaction is: its chunk of changed files (1-based, of ``chunks``), its
    transaction within the chunk, and the articles this sync committed before it."""

    chunk: int
    chunks: int
    transaction: int = 1
    transactions: int = 1  # 0: not known yet (the chunk's articles are still rendering)
    committed: int = 0

    def where(self) -> str:
        where = f"chunk {self.chunk}/{self.chunks}"
        if self.transactions > 1:
            where += f" (transaction {self.transaction}/{self.transactions})"
        elif self.transactions == 0:
            where += f" (transaction {self.transaction})"
        return where

    def before(self) -> str:
        """What was committed before this transaction, by chunk."""
        parts = []
        if self.chunk == 2:
            parts.append("chunk 1")
        elif self.chunk > 2:
            parts.append(f"chunks 1-{self.chunk - 1}")
        if self.transaction > 1:
            parts.append(f"the first {self.transaction - 1} transaction(s) of chunk {self.chunk}")
        return " and ".join(parts)


def worded(exc: BaseException, position: WritePosition) -> Exception:
    """The error to raise for ``exc``, which failed a transaction at ``position``: retryable causes
    stay DatabaseUnavailable (a retry may pass), any other becomes StoreStepFailed."""
    step = step_of(exc) or "writing"
    if position.committed:
        served = f"the {position.committed} articles committed before it ({position.before()}) are served"
    else:
        served = "nothing of this sync was committed before it: readers see what they saw before"
    message = (
        f"{step} of {position.where()} failed: {cause(exc)}; that transaction was rolled back, nothing "
        f"of it is stored; {served}; the next sync writes the rest"
    )
    return _typed(exc, message)


def worded_after_commits(exc: BaseException, step: str, committed: int) -> Exception:
    """The error for a statement that failed after every chunk was committed (remembering the files
    that failed to parse)."""
    message = (
        f"{step_of(exc) or step} failed: {cause(exc)}; it was rolled back; every chunk of this sync was "
        f"committed and is served ({committed} articles)"
    )
    return _typed(exc, message)


def worded_before_writes(exc: BaseException, step: str) -> Exception:
    """The error for a statement that failed before anything was written (reading the index)."""
    return _typed(exc, f"{step_of(exc) or step} failed: {cause(exc)}; nothing of this sync was written")


def _typed(exc: BaseException, message: str) -> Exception:
    if isinstance(exc, DatabaseUnavailable):
        return type(exc)(message)  # DatabaseNotInitialised stays itself
    return StoreStepFailed(message)


def failure_text(exc: BaseException) -> str:
    """A failed sync's error for the delivery record: our own words as they are, anything else with
    its type (``SourceUnavailable: ...``)."""
    if isinstance(exc, StoreStepFailed | DatabaseUnavailable) or step_of(exc) is not None:
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
