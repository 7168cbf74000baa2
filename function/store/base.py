"""What every part of the store shares: the session it runs in, and error translation."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import peewee

from function.store.backends import is_mysql, unwrap
from function.store.connection import Session, translate_errors

P = ParamSpec("P")
R = TypeVar("R")


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Connection failures inside ``method`` become DatabaseUnavailable."""

    @wraps(method)
    def inner(*args: P.args, **kwargs: P.kwargs) -> R:
        with translate_errors():
            return method(*args, **kwargs)

    return inner


def session_of(db: Session | peewee.Database | peewee.DatabaseProxy) -> Session:
    """``db`` itself when it is a session; else a new session on the database (its connection owned by
    the caller)."""
    return db if isinstance(db, Session) else Session(unwrap(db))


class StoreBase:
    """One group of queries (users, locks, reconcile, deliveries, reads, sweep state, outgoing webhooks):
    each is its own object on a ``Session``, and ``PeeweeStore`` composes them on one session."""

    def __init__(self, db: Session | peewee.Database | peewee.DatabaseProxy) -> None:
        self._session = session_of(db)
        self._db = self._session.db

    @property
    def db(self) -> peewee.Database:
        return self._db

    def _rows(self, query: Any) -> list[tuple[Any, ...]]:
        """Run a SELECT on this store's database; rows as tuples."""
        return list(query.tuples().bind(self._db))

    def _first(self, query: Any) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = query.tuples().bind(self._db).first()
        return row

    def _locking(self, query: Any) -> Any:
        """``query`` as a read that a write of the same transaction depends on: on MySQL/TiDB inside a
        transaction, ``SELECT ... FOR UPDATE``, which reads the latest committed rows and locks them
        until the transaction ends. A plain SELECT there reads the snapshot taken when the transaction
        began (TiDB's pessimistic mode), from before a concurrent writer committed, so a decision made
        on it can undo that writer's work. Outside a transaction, and on SQLite (whose write
        transactions hold the database's write lock from BEGIN IMMEDIATE), the query as it is."""
        if is_mysql(self._db) and self._db.in_transaction():
            return query.for_update()
        return query
