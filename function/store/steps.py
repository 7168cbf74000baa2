"""Which part of a write a database error came from ("writing tags", "archiving articles").

A driver's message alone ("parser stack overflow", "Duplicate entry ...") does not tell a user what
failed or what is left; the store notes the step on the error as it passes, and whoever reports the
error (the worker's delivery record, the CLI) says it in words. The error keeps its type, so what is
retryable (a dropped connection) stays retryable.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import peewee
import pymysql

from function.errors import DatabaseUnavailable
from function.store.driver_errors import error_chain, known

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


def cause(exc: BaseException) -> str:
    """The database's own words, short, with what its code means when the store knows it
    (``function.store.driver_errors``): ``injected failure (error 1644)``, ``Transaction is too large,
    size: 104857600 (error 8004: the database refused the transaction as too large: ...)``."""
    for err in error_chain(exc):
        args: tuple[Any, ...] = getattr(err, "args", ())
        if isinstance(err, pymysql.err.MySQLError) and len(args) >= 2 and isinstance(args[0], int):
            entry = known(args[0], str(args[1]))
            meaning = f": the database {entry.words}" if entry is not None else ""
            return f"{_first_line(str(args[1]))} (error {args[0]}{meaning})"
        if isinstance(err, sqlite3.Error):
            return _first_line(str(err)) or type(err).__name__
    return _first_line(str(exc)) or type(exc).__name__


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else text)[:300]


def is_store_error(exc: BaseException) -> bool:
    """True when ``exc`` came from the database (a driver's, Peewee's or the store's own error), not
    from a bug or an interruption in the caller's code."""
    return step_of(exc) is not None or isinstance(
        exc, DatabaseUnavailable | peewee.PeeweeException | pymysql.err.Error | sqlite3.Error
    )
