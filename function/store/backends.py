"""The two database backends: TiDB/MySQL/MariaDB through PyMySQL, and SQLite (the embedded default).

``DATABASE_URL`` is a Peewee-style URL: ``mysql://user:pw@host:4000/db?ssl_ca=...`` or ``sqlite:///path``.
Everything that differs between the two (connect arguments, transaction start, one-round-trip batches) is
decided here, once. Queries bind to the database explicitly (``.bind(db)``); no model has a global one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import peewee
import pymysql
from pymysql.constants import CLIENT

from function.store.driver_errors import is_connection_error
from function.store.tls import pymysql_tls_arguments, split_tls_options
from function.store.url import parse_database_url

log = logging.getLogger(__name__)
_peewee_log = logging.getLogger("peewee")


@dataclass(frozen=True)
class Batch:
    """The ``params`` of a query-hook event for several statements sent in one round trip."""

    statements: tuple[str, ...]


@dataclass(frozen=True)
class StatementResult:
    rowcount: int
    rows: list[tuple[Any, ...]]


class MySQLDatabase(peewee.MySQLDatabase):
    """MySQL/TiDB/MariaDB with transaction control sent through ``execute_sql``, so query hooks (the
    statement counter, fault injection in tests) see BEGIN/COMMIT/ROLLBACK like any other round trip."""

    def init(
        self,
        database: str | None,
        mariadb: bool | None = None,
        *,
        max_connection_age_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ) -> None:
        self._tls_options, rest = split_tls_options(kwargs)
        super().init(database, mariadb=mariadb, **rest)
        self._tls_arguments: dict[str, Any] | None = None  # built at the first connect, then shared
        self._kept = threading.local()  # per thread, like Peewee's connection state
        self.reconnects = 0  # connections found dead on a job's first statement (tests, metrics)
        # How long a kept connection may serve jobs (``function.store.connection`` decides); None: no limit.
        self.max_connection_age_s = max_connection_age_s
        self.retired = 0  # kept connections closed for their age (tests, logs)
        self.clock = clock  # seconds, for the connections' age (tests move it)

    @property
    def tls_options(self) -> dict[str, Any]:
        """The URL's ``ssl_*`` options, which ``function.store.tls`` turns into PyMySQL's arguments."""
        return dict(self._tls_options)

    def connection_age(self) -> float | None:
        """Seconds since this thread's connection was opened; None when it has none."""
        opened = getattr(self._kept, "opened_at", None)
        if opened is None or self.is_closed():
            return None
        return float(self.clock() - opened)

    def check_first_statement(self, enabled: bool) -> None:
        """With ``enabled``, the next statement on this thread runs on a connection kept from an
        earlier job, which may have died while the environment was frozen (TiDB and proxies drop idle
        connections): a read that fails for the connection is run again on a new one, and before a
        write the connection is pinged first, so a write is never sent twice."""
        self._kept.unchecked = enabled

    def execute_sql(self, sql: str, params: Any = None) -> Any:
        if not getattr(self._kept, "unchecked", False):
            return super().execute_sql(sql, params)
        self._kept.unchecked = False
        if not _is_read(sql) or self.in_transaction():
            self._replace_if_dead()
            return super().execute_sql(sql, params)
        try:
            return super().execute_sql(sql, params)
        except (peewee.PeeweeException, pymysql.err.Error, OSError) as exc:
            if not is_connection_error(exc):
                raise
            # Nothing of this job reached the server: the statement is a read (or takes a named lock,
            # which died with the session), so running it again on a new connection is safe.
            self._reconnect(exc)
            return super().execute_sql(sql, params)

    def _replace_if_dead(self) -> None:
        try:
            self.connection().ping(reconnect=False)
        except (pymysql.err.Error, OSError) as exc:
            self._reconnect(exc)

    def _reconnect(self, exc: BaseException) -> None:
        log.info("The kept database connection was gone; reconnecting", extra={"error": str(exc)[:200]})
        self.reconnects += 1
        try:
            self.close()
        except (peewee.PeeweeException, pymysql.err.Error, OSError):
            pass  # a dead connection cannot be closed politely; Peewee has reset its state anyway
        self.connect()

    def _connect(self) -> Any:
        # As peewee's own, plus TLS from ``function.store.tls`` (one context per database, see there),
        # and multi-statements for ``execute_batch``. Every value in our SQL is a parameter, which
        # PyMySQL escapes (a batch's statements are written by its ``mogrify``), so the flag widens
        # nothing an attacker controls.
        if self._tls_arguments is None:
            self._tls_arguments = pymysql_tls_arguments(self._tls_options)
        opened = pymysql.connections.Connection(
            database=self.database,
            autocommit=True,
            client_flag=CLIENT.MULTI_STATEMENTS,
            **self.connect_params,
            **self._tls_arguments,
        )
        self._kept.opened_at = self.clock()
        return opened

    def execute_batch(self, statements: Sequence[str]) -> list[StatementResult]:
        """Send ``statements`` (complete SQL, values already escaped by PyMySQL) in one round trip and
        read every result in order. The server stops at the first failing statement; its error is raised
        here. Query hooks see one event whose ``params`` is a ``Batch`` of the statements. A batch writes:
        on a connection kept from an earlier job it pings first (``check_first_statement``)."""
        if getattr(self._kept, "unchecked", False):
            self._kept.unchecked = False
            self._replace_if_dead()
        return self._send_batch(statements)

    def _send_batch(self, statements: Sequence[str]) -> list[StatementResult]:
        sql = ";\n".join(statements)
        _peewee_log.debug((sql, None))  # as peewee logs every query it runs
        started = time.perf_counter()
        results: list[StatementResult] = []
        try:
            # Driver errors become Peewee's, as for every other query.
            with peewee.__exception_wrapper__:  # type: ignore[attr-defined]
                cursor = self.cursor()
                cursor.execute(sql)  # no arguments: PyMySQL sends the text as it is
                while True:
                    rows = list(cursor.fetchall()) if cursor.description else []
                    results.append(StatementResult(cursor.rowcount, rows))
                    if not cursor.nextset():
                        break
        except Exception as exc:
            # Which statement failed: the server ran every one before it (their results were read).
            exc.failed_at = len(results)  # type: ignore[attr-defined]
            self._notify_batch(sql, statements, started, exc)
            raise
        self._notify_batch(sql, statements, started, None)
        return results

    def _notify_batch(
        self, sql: str, statements: Sequence[str], started: float, exc: Exception | None
    ) -> None:
        event = peewee.QueryEvent(sql, Batch(tuple(statements)), time.perf_counter() - started, exc)
        for hook in self.query_hooks:
            hook(event)

    def begin(self, isolation_level: str | None = None) -> None:
        if isolation_level:
            self.execute_sql(f"SET TRANSACTION ISOLATION LEVEL {isolation_level}")
        self.execute_sql("BEGIN")

    def commit(self) -> None:
        if self.is_closed():
            raise peewee.InterfaceError("Cannot commit, database connection not open.")
        self.execute_sql("COMMIT")

    def rollback(self) -> None:
        if self.is_closed():
            raise peewee.InterfaceError("Cannot rollback, database connection not open.")
        self.execute_sql("ROLLBACK")


def _is_read(sql: str) -> bool:
    """A statement that changes no data: SELECT (GET_LOCK included), BEGIN, SHOW."""
    head = sql.lstrip()[:6].upper()
    return head.startswith(("SELECT", "BEGIN", "SHOW"))


class SqliteDatabase(peewee.SqliteDatabase):
    """SQLite with transaction control visible to query hooks (see ``MySQLDatabase``)."""

    def begin(self, lock_type: str | None = None) -> None:
        lock_type = lock_type or getattr(self, "_lock_type", None)
        self.execute_sql(f"BEGIN {lock_type}" if lock_type else "BEGIN")

    def commit(self) -> None:
        if self.is_closed():
            raise peewee.InterfaceError("Cannot commit, database connection not open.")
        self.execute_sql("COMMIT")

    def rollback(self) -> None:
        if self.is_closed():
            raise peewee.InterfaceError("Cannot rollback, database connection not open.")
        self.execute_sql("ROLLBACK")


def open_database(url: str, *, max_connection_age_s: float | None = None) -> peewee.Database:
    """A Peewee database for ``url``, not yet connected. ``max_connection_age_s``: how long a
    connection kept between jobs may live (MySQL/TiDB; see ``function.store.connection.job_session``).

    ``mysql://user:pw@host:port/db?ssl_ca=/path&ssl_verify_identity=true``: PyMySQL, utf8mb4, autocommit,
    connect/read/write time-outs (overridable in the query string), TLS settings from the query string.
    ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``: creates the parent folder; WAL,
    busy time-out and foreign keys on. Raises DatabaseUrlError (a ValueError) for anything else.
    """
    target = parse_database_url(url)
    if target.kind == "mysql":
        return MySQLDatabase(target.name, max_connection_age_s=max_connection_age_s, **target.params)
    if target.name != ":memory:":
        Path(target.name).parent.mkdir(parents=True, exist_ok=True)
    pragmas = {
        "journal_mode": "wal",
        "busy_timeout": 5000,
        "foreign_keys": 1,
        "synchronous": "normal",
    }
    return SqliteDatabase(target.name, pragmas=pragmas, timeout=5)


def unwrap(db: peewee.Database | peewee.DatabaseProxy) -> peewee.Database:
    """The real database behind a proxy (or ``db`` itself)."""
    if isinstance(db, peewee.DatabaseProxy):
        if db.obj is None:
            raise peewee.InterfaceError("the database proxy is not initialised")
        real: peewee.Database = db.obj
        return real
    return db


def is_mysql(db: peewee.Database | peewee.DatabaseProxy) -> bool:
    """True for the MySQL protocol family (TiDB, MySQL, MariaDB)."""
    return isinstance(unwrap(db), peewee.MySQLDatabase)
