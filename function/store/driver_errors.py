"""What a driver error means: the database unreachable, our credentials refused or the connection gone
(worth a retry, answered 503), or not.
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


# Error codes that mean "the server refused us": a wrong password or user, a host not allowed, a TLS or
# auth-plugin failure. A configuration or rotation problem, not a bug in a delivery: answered 503 like
# an outage (retryable, the cause in the log), never 500 INTERNAL retried into the dead-letter queue.
AUTH_ERRORS = frozenset(
    {
        1044,  # access denied for user to database
        1045,  # access denied for user (using password: YES/NO)
        1049,  # unknown database (a DATABASE_URL naming a database that is not there yet)
        1129,  # host blocked because of many connection errors
        1130,  # host is not allowed to connect
        1251,  # client does not support the server's authentication protocol
        1698,  # MariaDB/MySQL: access denied (auth plugin, e.g. unix_socket)
        2026,  # TLS connection error
        2059,  # authentication plugin cannot be loaded
        2061,  # authentication requires a secure connection
        3159,  # connections using insecure transport are prohibited (require_secure_transport)
        8004,  # TiDB Cloud: server requires TLS / not allowed
    }
)


def error_code(exc: BaseException) -> int | None:
    """The driver's numeric error code inside ``exc``, if any."""
    for err in error_chain(exc):
        if isinstance(err, pymysql.err.MySQLError) and err.args and isinstance(err.args[0], int):
            return err.args[0]
    return None


def is_connection_error(exc: BaseException) -> bool:
    """True when ``exc`` (a Peewee or driver error) means the database is unreachable, refused our
    credentials, the connection dropped, or the server aborted the transaction for a reason that
    passes on retry."""
    for err in error_chain(exc):
        if isinstance(err, pymysql.err.OperationalError | pymysql.err.InternalError) and err.args:
            if err.args[0] in _CONNECTION_ERRORS or err.args[0] in AUTH_ERRORS:
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
