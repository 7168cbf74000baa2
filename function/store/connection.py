"""Connections per request or job, and what a driver error means: unavailable (retryable) or a bug."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator

import peewee
import pymysql

from function.errors import DatabaseNotInitialised, DatabaseUnavailable
from function.store.backends import unwrap

log = logging.getLogger(__name__)
_peewee_log = logging.getLogger("peewee")


# PyMySQL error codes that mean "the server could not be reached or the connection is gone".
_CONNECTION_ERRORS = frozenset(
    {
        2002,  # can't connect through socket
        2003,  # can't connect (refused, time-out)
        2005,  # unknown host
        2006,  # server has gone away
        2013,  # lost connection during query (also read/write time-outs)
        2014,  # commands out of sync (a half-read result after a drop)
        2055,  # lost connection (system error)
        1040,  # too many connections
        1053,  # server shutdown in progress
        1927,  # MariaDB: connection was killed
        1317,  # query execution was interrupted (KILL QUERY)
        1205,  # lock wait time-out: another transaction holds the rows, worth a retry
        1213,  # deadlock: the transaction was rolled back, worth a retry
        8022,  # TiDB: write conflict at commit (optimistic mode), worth a retry
        9007,  # TiDB: write conflict
    }
)


def is_connection_error(exc: BaseException) -> bool:
    """True when ``exc`` (a Peewee or driver error) means the database is unreachable, the connection
    dropped, or the server aborted the transaction for a reason that passes on retry."""
    for err in _causes(exc):
        if isinstance(err, pymysql.err.OperationalError | pymysql.err.InternalError) and err.args:
            if err.args[0] in _CONNECTION_ERRORS:
                return True
        elif isinstance(err, pymysql.err.InterfaceError):
            return True  # PyMySQL raises it for a connection that is already closed
        elif isinstance(err, sqlite3.OperationalError):
            text = str(err).lower()
            if "locked" in text or "busy" in text or "unable to open" in text or "disk i/o" in text:
                return True
        elif isinstance(err, TimeoutError | ConnectionError):
            return True
    return False


def is_missing_table(exc: BaseException) -> bool:
    """True when ``exc`` says a table does not exist: a database nobody ran ``init-db`` against."""
    for err in _causes(exc):
        if isinstance(err, pymysql.err.ProgrammingError) and err.args and err.args[0] == 1146:
            return True
        if isinstance(err, sqlite3.OperationalError) and str(err).startswith("no such table"):
            return True
    return False


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        # Peewee wraps the driver's error and passes it as the first argument.
        for arg in current.args:
            if isinstance(arg, BaseException) and id(arg) not in seen:
                yield from _causes(arg)
        current = current.__cause__ or current.__context__


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise connection-level failures inside the block as DatabaseUnavailable."""
    try:
        yield
    except DatabaseUnavailable:
        raise
    except (peewee.PeeweeException, pymysql.err.Error, sqlite3.Error, OSError) as exc:
        if is_connection_error(exc):
            raise DatabaseUnavailable(_describe(exc)) from exc
        if is_missing_table(exc):
            raise DatabaseNotInitialised(
                "the database has no blog-api tables yet: run `blog-api init-db` against it"
            ) from exc
        raise


def _describe(exc: BaseException) -> str:
    # Driver messages name the host and the error, never the password.
    return f"database unavailable: {exc}"[:500]


@contextlib.contextmanager
def connection(db: peewee.Database | peewee.DatabaseProxy) -> Iterator[peewee.Database]:
    """Connect for one request or job and always close after, even when the connection died.

    Reuses a connection already opened by an outer block on this thread (only the outermost block
    closes). Raises DatabaseUnavailable for connection failures, inside the block or at connect.
    """
    real = unwrap(db)
    opened = False
    with translate_errors():
        opened = real.connect(reuse_if_open=True)
    try:
        with translate_errors():
            yield real
    finally:
        if opened:
            close_quietly(real)


def close_quietly(db: peewee.Database) -> None:
    """Close ``db``'s connection on this thread, even one that died or was left in a transaction."""
    if db.in_transaction():
        # Only reachable when the block left a transaction open by mistake; the server rolls it back
        # when the connection closes, so drop our bookkeeping instead of failing the close.
        while db.in_transaction():
            db.pop_transaction()
    try:
        db.close()
    except (peewee.PeeweeException, pymysql.err.Error, sqlite3.Error, OSError) as exc:
        # A dropped connection cannot be closed politely; Peewee has reset its state anyway.
        log.debug("Closing a broken database connection failed", extra={"error": str(exc)})
