"""The database: one Peewee proxy, opened from one URL, connected per request or job.

``DATABASE_URL`` is a Peewee-style URL: ``mysql://user:pw@host:4000/db?ssl_ca=...`` (TiDB, MySQL,
MariaDB through PyMySQL) or ``sqlite:///path`` (the embedded default). Everything that differs between
the two backends (connect arguments, upsert syntax, transaction start) is decided here, once.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import peewee
import pymysql
from pymysql.constants import CLIENT

from function.store.url import parse_database_url

log = logging.getLogger(__name__)
_peewee_log = logging.getLogger("peewee")

# The one proxy every model binds to; ``bind(url)`` initialises it at start-up (never at import).
database_proxy = peewee.DatabaseProxy()

# Article rows per INSERT: an article row carries its Markdown and HTML, so this keeps a statement far
# below MySQL's max_allowed_packet (16-64 MB by default) for articles of normal size.
CHUNK_SIZE = 500
# Keys per IN (...) and small rows (tags, tag pairs) per INSERT: well under SQLite's limit of 32,766
# bound parameters, and a few hundred KB per statement at most.
KEY_CHUNK_SIZE = 5000

# MySQL/TiDB: a transaction's statements travel together, several per round trip (multi-statements), up
# to this many bytes per round trip. Through Lambda → proxy → Tailnet → TiDB a round trip is 30-40 ms,
# more than the server spends on the statements of a sync; 4 MB stays far below max_allowed_packet.
BATCH_MAX_BYTES = 4 * 1024 * 1024

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


class DatabaseUnavailable(Exception):
    """The database could not be reached, the connection dropped or timed out, or the transaction was
    aborted by the server (deadlock, lock wait). Nothing was committed; worth retrying."""


class DatabaseNotInitialised(DatabaseUnavailable):
    """The database answers but has no tables: retryable, since the delivery succeeds once someone
    runs ``blog-api init-db`` (before Lambda's retries run out)."""


@dataclass(frozen=True)
class Batch:
    """The ``params`` of a query-hook event for several statements sent in one round trip."""

    statements: tuple[str, ...]


@dataclass(frozen=True)
class StatementResult:
    rowcount: int
    rows: list[tuple[Any, ...]]


class _SslReusingConnection(pymysql.connections.Connection):
    """PyMySQL's connection, taking its SSL context from ``ssl_contexts`` once one was built.

    PyMySQL builds a new context on every connect, TLS or not (its "preferred" mode), and building one
    loads the CA bundle: ~55 ms of CPU per job on this machine, more than a database round trip. The
    settings are fixed per database, so one context per database serves every connection (contexts are
    thread-safe); what PyMySQL builds and how it uses it is unchanged.
    """

    def __init__(self, *args: Any, ssl_contexts: dict[str, Any], **kwargs: Any) -> None:
        self._ssl_contexts = ssl_contexts
        super().__init__(*args, **kwargs)

    def _create_ssl_ctx(self, sslp: Any) -> Any:
        if not isinstance(sslp, dict):
            return super()._create_ssl_ctx(sslp)
        key = repr(sorted(sslp.items()))
        context = self._ssl_contexts.get(key)
        if context is None:
            context = self._ssl_contexts.setdefault(key, super()._create_ssl_ctx(sslp))
        return context


class _MySQLDatabase(peewee.MySQLDatabase):
    """MySQL/TiDB/MariaDB with transaction control sent through ``execute_sql``, so query hooks (the
    statement counter, fault injection in tests) see BEGIN/COMMIT/ROLLBACK like any other round trip."""

    def init(self, database: str | None, mariadb: bool | None = None, **kwargs: Any) -> None:
        super().init(database, mariadb=mariadb, **kwargs)
        self._ssl_contexts: dict[str, Any] = {}

    def _connect(self) -> Any:
        # As peewee's own, plus the SSL context built once per database (see _SslReusingConnection), and
        # multi-statements for ``execute_batch``. Every value in our SQL is escaped by PyMySQL (we never
        # format values into SQL ourselves), so the flag widens nothing an attacker controls.
        return _SslReusingConnection(
            database=self.database,
            autocommit=True,
            ssl_contexts=self._ssl_contexts,
            client_flag=CLIENT.MULTI_STATEMENTS,
            **self.connect_params,
        )

    def execute_batch(self, statements: Sequence[str]) -> list[StatementResult]:
        """Send ``statements`` (complete SQL, values already escaped) in one round trip and read every
        result in order. The server stops at the first failing statement; its error is raised here.
        Query hooks see one event whose ``params`` is a ``Batch`` of the statements."""
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


class _SqliteDatabase(peewee.SqliteDatabase):
    """SQLite with transaction control visible to query hooks (see ``_MySQLDatabase``)."""

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


def open_database(url: str) -> peewee.Database:
    """A Peewee database for ``url``, not yet connected.

    ``mysql://user:pw@host:port/db?ssl_ca=/path&ssl_verify_identity=true``: PyMySQL, utf8mb4, autocommit,
    connect/read/write time-outs (overridable in the query string), TLS settings from the query string.
    ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``: creates the parent folder; WAL,
    busy time-out and foreign keys on. Raises DatabaseUrlError (a ValueError) for anything else.
    """
    target = parse_database_url(url)
    if target.kind == "mysql":
        return _MySQLDatabase(target.name, **target.params)
    if target.name != ":memory:":
        Path(target.name).parent.mkdir(parents=True, exist_ok=True)
    pragmas = {
        "journal_mode": "wal",
        "busy_timeout": 5000,
        "foreign_keys": 1,
        "synchronous": "normal",
    }
    return _SqliteDatabase(target.name, pragmas=pragmas, timeout=5)


def bind(url: str) -> peewee.Database:
    """Open the database for ``url``, point ``database_proxy`` at it and return it."""
    db = open_database(url)
    database_proxy.initialize(db)
    return db


def unwrap(db: peewee.Database | peewee.DatabaseProxy) -> peewee.Database:
    """The real database behind a proxy (or ``db`` itself)."""
    if isinstance(db, peewee.DatabaseProxy):
        if db.obj is None:
            raise peewee.InterfaceError("database_proxy is not bound: call function.store.db.bind(url) first")
        return db.obj
    return db


def is_mysql(db: peewee.Database | peewee.DatabaseProxy) -> bool:
    """True for the MySQL protocol family (TiDB, MySQL, MariaDB)."""
    return isinstance(unwrap(db), peewee.MySQLDatabase)


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
            _close_quietly(real)


def _close_quietly(db: peewee.Database) -> None:
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


def write_transaction(db: peewee.Database) -> Any:
    """A transaction for read-then-write work. On SQLite it starts with BEGIN IMMEDIATE, so the write
    lock is taken up front and a concurrent writer waits (busy time-out) instead of failing the upgrade
    from reader to writer; on MySQL the reads take row locks themselves (SELECT ... FOR UPDATE)."""
    if is_mysql(db):
        return db.atomic()
    return db.atomic("IMMEDIATE")


def upsert_many(
    db: peewee.Database,
    model: type[peewee.Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    conflict_target: Sequence[peewee.Field],
    preserve: Sequence[peewee.Field] = (),
    update: Mapping[peewee.Field, Any] | None = None,
) -> int:
    """Insert ``rows`` (dicts keyed by field name), updating the existing row on a unique-key conflict:
    ``preserve`` columns take the inserted value, ``update`` sets expressions over the existing row.
    One INSERT per ``CHUNK_SIZE`` rows; no statement at all for no rows. Returns the statement count.

    The one place the backends differ for upserts: MySQL renders ``ON DUPLICATE KEY UPDATE`` and
    refuses a conflict target (any unique key triggers it), SQLite needs ``ON CONFLICT (target)``.
    """
    queries = upsert_queries(
        db, model, rows, conflict_target=conflict_target, preserve=preserve, update=update
    )
    for query in queries:
        query.execute()
    return len(queries)


def upsert_queries(
    db: peewee.Database,
    model: type[peewee.Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    conflict_target: Sequence[peewee.Field],
    preserve: Sequence[peewee.Field] = (),
    update: Mapping[peewee.Field, Any] | None = None,
) -> list[Any]:
    """``upsert_many``'s INSERTs, bound to ``db`` and not yet run (for a ``StatementQueue``)."""
    queries = []
    for chunk in chunked(rows, CHUNK_SIZE):
        query = model.insert_many(list(chunk))
        if is_mysql(db):
            query = query.on_conflict(preserve=list(preserve), update=dict(update or {}))
        else:
            query = query.on_conflict(
                conflict_target=list(conflict_target), preserve=list(preserve), update=dict(update or {})
            )
        queries.append(query.bind(db))
    return queries


class StatementQueue:
    """The statements of one transaction (``batched_transaction``), in order.

    MySQL/TiDB: ``add`` only queues; the queue travels with the next ``read`` or with the COMMIT, so a
    transaction of any number of statements costs one round trip (one per ``BATCH_MAX_BYTES``) plus one
    per ``read``. SQLite (local, no latency to save): every statement runs at once.
    """

    def __init__(self, db: peewee.Database) -> None:
        self._db = db
        self._mysql = db if isinstance(db, _MySQLDatabase) else None
        self._pending: list[tuple[int | None, str]] = []  # (result slot or None, SQL)
        self._results: list[StatementResult | None] = []
        self.sent = False  # something reached the server: a failure must roll back

    def add(self, query: Any) -> int:
        """Queue a statement; its result (``rowcount``) is known once the transaction ends."""
        slot = len(self._results)
        self._results.append(None)
        sql, params = query.sql()
        if self._mysql is not None:
            self._pending.append((slot, self._db.cursor().mogrify(sql, params or None)))
        else:
            self.sent = True
            cursor = self._db.execute_sql(sql, params)
            self._results[slot] = StatementResult(cursor.rowcount, [])
        return slot

    def read(self, query: Any) -> list[tuple[Any, ...]]:
        """Run a SELECT now (with whatever is queued before it) and return its rows."""
        if self._mysql is None:
            self.sent = True
            return list(query.tuples())
        slot = self.add(query)
        self.flush()
        result = self._results[slot]
        assert result is not None  # flush fills every slot it sent
        return result.rows

    def rowcount(self, slot: int) -> int:
        result = self._results[slot]
        if result is None:
            raise RuntimeError("the statement has not run yet: read results after the transaction")
        return result.rowcount

    def queue_sql(self, sql: str) -> None:
        """Queue a statement with no parameters and no result to keep (BEGIN, COMMIT)."""
        self._pending.append((None, sql))

    def flush(self) -> None:
        """Send what is queued, ``BATCH_MAX_BYTES`` at most per round trip."""
        if self._mysql is None:
            return
        for group in _packed(self._pending):
            self.sent = True
            results = self._mysql.execute_batch([sql for _, sql in group])
            for (slot, _), result in zip(group, results, strict=True):
                if slot is not None:
                    self._results[slot] = result
        self._pending = []


def _packed(pending: Sequence[tuple[int | None, str]]) -> Iterator[list[tuple[int | None, str]]]:
    group: list[tuple[int | None, str]] = []
    size = 0
    for item in pending:
        length = len(item[1].encode())
        if group and size + length > BATCH_MAX_BYTES:
            yield group
            group, size = [], 0
        group.append(item)
        size += length
    if group:
        yield group


@contextlib.contextmanager
def batched_transaction(db: peewee.Database) -> Iterator[StatementQueue]:
    """One all-or-nothing transaction whose statements are queued on a ``StatementQueue``.

    MySQL/TiDB: BEGIN, the statements and COMMIT are sent together when the block ends (earlier only for
    a ``read``); if any of them fails, or the block raises after something was sent, a ROLLBACK follows
    (a dropped connection rolls back on the server by itself). SQLite: ``write_transaction``.
    """
    if not isinstance(db, _MySQLDatabase):
        with write_transaction(db):
            yield StatementQueue(db)
        return
    queue = StatementQueue(db)
    queue.queue_sql("BEGIN")
    try:
        yield queue
        queue.queue_sql("COMMIT")
        queue.flush()
    except BaseException:
        if queue.sent:
            _rollback_quietly(db)
        raise


def _rollback_quietly(db: peewee.Database) -> None:
    try:
        db.execute_sql("ROLLBACK")
    except (peewee.PeeweeException, pymysql.err.Error, OSError) as exc:
        # The connection is gone: the server rolled the transaction back when it lost it.
        log.debug("ROLLBACK after a failed transaction failed", extra={"error": str(exc)})


def chunked(items: Sequence[Any], size: int = CHUNK_SIZE) -> Iterator[Sequence[Any]]:
    """Consecutive slices of at most ``size`` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class StatementLog:
    """What ``count_statements`` saw: every statement sent, in order (BEGIN/COMMIT included), and the
    round trips they took (several statements share one on MySQL/TiDB, see ``StatementQueue``)."""

    statements: list[str] = field(default_factory=list)
    round_trips: int = 0

    @property
    def count(self) -> int:
        return len(self.statements)

    def matching(self, prefix: str) -> list[str]:
        """The statements starting with ``prefix`` (case-insensitive), e.g. ``"INSERT"``."""
        return [s for s in self.statements if s.lstrip().upper().startswith(prefix.upper())]


@contextlib.contextmanager
def count_statements(db: peewee.Database | peewee.DatabaseProxy) -> Iterator[StatementLog]:
    """Record every statement ``db`` sends (on any thread) while the block runs: a round-trip counter
    for tests and the benchmark. Connecting itself (handshake, pragmas) is not counted."""
    real = unwrap(db)
    seen = StatementLog()

    def hook(event: Any) -> None:
        seen.round_trips += 1
        if isinstance(event.params, Batch):
            seen.statements.extend(event.params.statements)
        else:
            seen.statements.append(event.sql)

    real.query_hooks.append(hook)
    try:
        yield seen
    finally:
        real.query_hooks.remove(hook)
