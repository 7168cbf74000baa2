"""What a driver error means: the database unreachable or the connection gone (worth a retry), or not.
Its own module so that both the backends and the connection helpers can ask, neither importing the other."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pymysql

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
    for err in error_chain(exc):
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


def error_chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        # Peewee wraps the driver's error and passes it as the first argument.
        for arg in current.args:
            if isinstance(arg, BaseException) and id(arg) not in seen:
                yield from error_chain(arg)
        current = current.__cause__ or current.__context__
