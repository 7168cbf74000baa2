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
from function.store.driver_errors import AUTH_ERRORS, error_chain, error_code, is_connection_error

log = logging.getLogger(__name__)
_peewee_log = logging.getLogger("peewee")


def is_missing_table(exc: BaseException) -> bool:
    """True when ``exc`` says a table does not exist: a database nobody ran ``init-db`` against."""
    for err in error_chain(exc):
        if isinstance(err, pymysql.err.ProgrammingError) and err.args and err.args[0] == 1146:
            return True
        if isinstance(err, sqlite3.OperationalError) and str(err).startswith("no such table"):
            return True
    return False


@contextlib.contextmanager
def translate_errors(server: str = "") -> Iterator[None]:
    """Re-raise connection-level failures inside the block as DatabaseUnavailable (naming ``server``)."""
    try:
        yield
    except DatabaseUnavailable:
        raise
    except (peewee.PeeweeException, pymysql.err.Error, sqlite3.Error, OSError) as exc:
        if is_connection_error(exc):
            raise DatabaseUnavailable(_describe(exc, server)) from exc
        if is_missing_table(exc):
            raise DatabaseNotInitialised(
                "the database has no blog-api tables yet: run `blog-api init-db` against it"
            ) from exc
        raise


def _describe(exc: BaseException, server: str) -> str:
    # Driver messages name the user and the error, never the password; the server and the code are
    # what an operator needs to tell a wrong password (1045) from an outage (2003).
    code = error_code(exc)
    kind = "refused the credentials" if code in AUTH_ERRORS else "unavailable"
    where = f" at {server}" if server else ""
    number = f" (error {code})" if code is not None else ""
    return f"database{where} {kind}{number}: {exc}"[:500]


def server_of(db: peewee.Database) -> str:
    """``host:port`` (or the SQLite file) of ``db``, for log lines; never the user or password."""
    if isinstance(db, peewee.SqliteDatabase):
        return str(db.database)
    params = getattr(db, "connect_params", {}) or {}
    host = params.get("host") or params.get("unix_socket") or "localhost"
    port = params.get("port")
    return f"{host}:{port}" if port else str(host)


@contextlib.contextmanager
def connection(db: peewee.Database | peewee.DatabaseProxy) -> Iterator[peewee.Database]:
    """Connect for one request or job and always close after, even when the connection died.

    Reuses a connection already opened by an outer block on this thread (only the outermost block
    closes). Raises DatabaseUnavailable for connection failures, inside the block or at connect.
    """
    real = unwrap(db)
    opened = False
    server = server_of(real)
    with translate_errors(server):
        opened = real.connect(reuse_if_open=True)
    try:
        with translate_errors(server):
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
