"""The one module that decides how long a connection lives: per request or job (``connection``), kept
for the next job on a warm Lambda (``job_session``), closed even when it died (``close_quietly``); and
what a driver error means: unavailable (retryable) or a bug."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import peewee
import pymysql

from function.errors import DatabaseNotInitialised, DatabaseUnavailable
from function.store.backends import MySQLDatabase, unwrap
from function.store.driver_errors import describe, error_chain, error_code, is_connection_error

log = logging.getLogger(__name__)
_peewee_log = logging.getLogger("peewee")

NO_TABLES = "the database has no blog-api tables yet: run `blog-api init-db` against it"


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
            raise DatabaseNotInitialised(NO_TABLES) from exc
        raise


def _describe(exc: BaseException, server: str) -> str:
    # Driver messages name the user and the error, never the password; the server, the code and the
    # table's words (``driver_errors``) are what an operator needs to tell a wrong password (1045)
    # from an outage (2003) or a write conflict worth retrying (9007).
    code = error_code(exc)
    words = describe(exc) or "unavailable"
    where = f" at {server}" if server else ""
    number = f" (error {code})" if code is not None else ""
    return f"database{where} {words}{number}: {exc}"[:500]


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


@dataclass
class Session:
    """One store's hold on a database: the connection's database, whether the job's end closes it, and
    the named server locks taken on it and not yet released. Every part of one store shares one."""

    db: peewee.Database
    # The connection is closed as soon as the caller's job ends (``job_session``), and the server drops
    # a session's named locks with it, so a lock need not be released by a statement: one round trip
    # less per delivery.
    closes_after_job: bool = False
    held_server_locks: set[int] = field(default_factory=set)  # user ids whose named lock is held

    def holds_server_locks(self) -> bool:
        """True while a named lock taken in this session was not released (its release failed)."""
        return bool(self.held_server_locks)


@contextlib.contextmanager
def job_session(db: peewee.Database | peewee.DatabaseProxy, *, keep: bool = False) -> Iterator[Session]:
    """A session on a connection opened for one request or job and closed when the block ends (connect
    and close per job). When this block opened the connection, the session knows the close will release
    its named locks; inside someone else's connection the store releases them itself.

    ``keep``: the connection stays open after the job for the next one on this thread (a warm Lambda
    invocation saves the TCP, TLS and authentication round trips). The store then releases its named
    locks itself; the connection is closed anyway when the job failed, left a transaction open or
    could not release a lock, so nothing of a job outlives it. A kept connection older than the
    database's ``max_connection_age_s`` is closed before the next job and a new one opened: TiDB Cloud
    may cut a connection that stayed open 30 minutes (a server restarting or maintained), and its
    public endpoint on AWS one idle for 340 s, so PingCAP advises a maximum lifetime, from 5 minutes.
    A kept connection that died in between is replaced on the next job's first statement
    (``MySQLDatabase.check_first_statement``)."""
    real = unwrap(db)
    if keep:
        with _kept_connection_job(real) as session:
            yield session
        return
    opens_here = real.is_closed()
    with connection(real):
        yield Session(real, closes_after_job=opens_here)


_jobs = threading.local()


def _outlived(db: MySQLDatabase) -> bool:
    """True when this thread's kept connection is as old as the database lets one be."""
    age, limit = db.connection_age(), db.max_connection_age_s
    if age is None or limit is None or age < limit:
        return False
    db.retired += 1
    log.info("Retiring a kept database connection for its age", extra={"age_s": round(age, 1)})
    return True


@contextlib.contextmanager
def _kept_connection_job(real: peewee.Database) -> Iterator[Session]:
    session = Session(real, closes_after_job=False)
    if getattr(_jobs, "open", False):
        yield session  # inside a job of this thread: the outer block decides about the connection
        return
    if isinstance(real, MySQLDatabase) and not real.is_closed():
        if _outlived(real):
            close_quietly(real)  # retired before the job, not found dead in the middle of it
        else:
            real.check_first_statement(True)
    _jobs.open = True
    done = False
    try:
        with translate_errors():
            real.connect(reuse_if_open=True)
            yield session
        done = True
    finally:
        _jobs.open = False
        if isinstance(real, MySQLDatabase):
            real.check_first_statement(False)
        if not done or real.in_transaction() or session.holds_server_locks():
            close_quietly(real)
