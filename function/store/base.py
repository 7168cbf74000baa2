"""What every part of the store shares: the database it runs on, and error translation."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import peewee

from function.store.backends import unwrap
from function.store.connection import translate_errors

P = ParamSpec("P")
R = TypeVar("R")


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Connection failures inside ``method`` become DatabaseUnavailable."""

    @wraps(method)
    def inner(*args: P.args, **kwargs: P.kwargs) -> R:
        with translate_errors():
            return method(*args, **kwargs)

    return inner


class StoreBase:
    def __init__(self, db: peewee.Database | peewee.DatabaseProxy, *, closes_after_job: bool = False) -> None:
        """``closes_after_job``: the connection is closed as soon as the caller's job ends (``job_store``),
        and the server drops a session's named locks with it, so ``installation_user_locked`` need not
        send RELEASE_LOCK: one round trip less per delivery."""
        self._db = unwrap(db)
        self._closes_after_job = closes_after_job
        self._held_server_locks: set[int] = set()  # user ids whose named lock this store holds

    def holds_server_locks(self) -> bool:
        """True while a named lock taken by this store was not released (its release failed)."""
        return bool(self._held_server_locks)

    @property
    def db(self) -> peewee.Database:
        return self._db

    def _rows(self, query: Any) -> list[tuple[Any, ...]]:
        """Run a SELECT on this store's database; rows as tuples."""
        return list(query.tuples().bind(self._db))

    def _first(self, query: Any) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = query.tuples().bind(self._db).first()
        return row
