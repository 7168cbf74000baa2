"""The TiDB-faithful test database: a relay on loopback in front of MariaDB that behaves, where the
store can tell, as TiDB does. It is not TiDB (docs/development.md lists what it cannot show).

A client connects to the relay as it would to the server (same user, password and databases); the
relay passes the MySQL protocol through, byte for byte, except:

- statements are rewritten as ``tests.kit.tidb_sql`` says: ``BEGIN`` takes its snapshot at once (a
  plain SELECT in a transaction reads what was committed before it began, as in TiDB's pessimistic
  mode), and ``GET_LOCK`` waits at least 1 s;
- a table gets the size checks of ``tests.kit.tidb_triggers`` (errors 8025 and 8004) before the first
  statement that writes it goes through, and gets them again, before anyone's next statement, once a
  ``ALTER TABLE``/``CREATE INDEX`` on it has been answered;
- before a statement that may write or begin a transaction, the relay resets the transaction's byte
  count when no transaction is open, and passes the limits (``entry_limit``, ``txn_limit``), in a
  statement of its own whose answer the client never sees.

TLS through the relay is passed through untouched, without these changes. Everything is per relay
object; a test may change the limits for a while (``limits``).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pymysql

from tests.kit.mariadb import ServerInfo
from tests.kit.mysql_packets import (
    PacketReader,
    frame,
    frames,
    handshake_database,
    is_ssl_request,
    ok_status,
    packet_count,
)
from tests.kit.tidb_sql import rewrite
from tests.kit.tidb_triggers import ENTRY_LIMIT, TXN_LIMIT, read_table, trigger_statements

log = logging.getLogger(__name__)

# Where the relay keeps its own function (GET_LOCK as TiDB waits); one per server, made once.
HELPER_DATABASE = "blogapi_tidb_mode"
GET_LOCK_FUNCTION = f"`{HELPER_DATABASE}`.`tidb_get_lock`"
_GET_LOCK_DDL = (
    f"CREATE OR REPLACE FUNCTION {GET_LOCK_FUNCTION}(lock_name VARCHAR(255), timeout DOUBLE) RETURNS INT "
    "NOT DETERMINISTIC NO SQL "
    # TiDB: at least 1 s, at most an hour, -1 an hour ("Locking functions", MySQL compatibility).
    "RETURN GET_LOCK(lock_name, "
    "IF(timeout = -1, 3600, IF(timeout IS NULL OR timeout < 1, 1, LEAST(timeout, 3600))))"
)

_COM_INIT_DB, _COM_QUERY = 0x02, 0x03
_MORE_RESULTS = 0x0008


class TiDBRelay:
    """``start()`` listens on a free loopback port in front of ``upstream``; ``stop()`` ends every
    relayed connection. ``entry_limit`` and ``txn_limit`` are TiDB's ``txn-entry-size-limit`` and
    ``txn-total-size-limit`` (6 MiB and 100 MiB by default), read at each statement."""

    def __init__(
        self, upstream: ServerInfo, *, entry_limit: int = ENTRY_LIMIT, txn_limit: int = TXN_LIMIT
    ) -> None:
        self.upstream = upstream
        self.entry_limit = entry_limit
        self.txn_limit = txn_limit
        self._listener: socket.socket | None = None
        self._sessions: set[_Session] = set()
        self._guard = threading.Lock()
        self._installing = threading.Lock()  # one installation of checks at a time, on ``_admin``
        self._dirty: set[tuple[str, str]] = set()  # tables whose shape changed since their checks
        self._installed: set[tuple[str, str]] = set()  # tables that have checks
        self._admin: pymysql.connections.Connection[Any] | None = None
        self.info: ServerInfo | None = None

    def start(self) -> ServerInfo:
        """Prepare the server (the GET_LOCK function) and listen; the relay's address, same user."""
        admin = self._admin_connection()
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{HELPER_DATABASE}`")
            cursor.execute(_GET_LOCK_DDL)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, name="tidb-relay", daemon=True).start()
        self.info = replace(self.upstream, host="127.0.0.1", port=int(listener.getsockname()[1]))
        return self.info

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._guard:
            sessions = list(self._sessions)
        for session in sessions:
            session.close()
        admin, self._admin = self._admin, None
        if admin is not None:
            with contextlib.suppress(pymysql.err.Error, OSError):
                admin.close()

    @contextlib.contextmanager
    def limits(self, *, entry: int | None = None, txn: int | None = None) -> Iterator[None]:
        """TiDB's limits set to ``entry``/``txn`` bytes for the block (a small one makes 8004 cheap to
        reach), then as they were."""
        before = (self.entry_limit, self.txn_limit)
        self.entry_limit = entry if entry is not None else self.entry_limit
        self.txn_limit = txn if txn is not None else self.txn_limit
        try:
            yield
        finally:
            self.entry_limit, self.txn_limit = before

    def reset_statement(self) -> bytes:
        """The relay's own statement: a new transaction's byte count, and the limits."""
        sql = (
            "SET @tidb_txn_bytes = IF(@@in_transaction = 1, COALESCE(@tidb_txn_bytes, 0), 0), "
            f"@tidb_entry_limit = {int(self.entry_limit)}, @tidb_txn_limit = {int(self.txn_limit)}"
        )
        return sql.encode()

    # -- the tables' checks ------------------------------------------------------------------------

    def mark_changed(self, tables: set[tuple[str, str]]) -> None:
        """These tables' shape may have changed: their checks are installed again before the next
        statement goes through."""
        with self._guard:
            self._dirty |= tables

    def install_checks(self, written: set[tuple[str, str]]) -> None:
        """Install the checks of the ``written`` tables that have none yet, and again those of every
        table whose shape changed since. A table another session holds (an open transaction that used
        it) is tried again at the next statement."""
        with self._guard:
            todo = {t for t in written if t not in self._installed} | (self._dirty & self._installed)
        if not todo:
            return
        with self._installing:
            admin = self._admin_connection()
            # The tables whose foreign keys point at a table written now (and their children, all the
            # way down) get their checks now too: MariaDB locks the parent to alter a child, and the
            # transaction writing the parent (an article's row, then its body) would hold it until its
            # commit, the child unchecked meanwhile.
            children = self._children_without_checks(admin, todo)
            while children - todo:
                todo |= children
                children = self._children_without_checks(admin, todo)
            for database, table in sorted(todo):
                with self._guard:
                    replacing = (database, table) in self._installed
                try:
                    found = read_table(admin, database, table)
                    if found is not None:
                        with admin.cursor() as cursor:
                            for statement in trigger_statements(found, replacing=replacing):
                                cursor.execute(statement)
                except pymysql.err.OperationalError as exc:
                    if exc.args and exc.args[0] == 1205:  # lock wait time-out: another session holds it
                        continue
                    raise
                with self._guard:
                    self._dirty.discard((database, table))
                    if found is not None:
                        self._installed.add((database, table))

    def _children_without_checks(
        self, admin: pymysql.connections.Connection[Any], parents: set[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        with admin.cursor() as cursor:
            for database, table in parents:
                cursor.execute(
                    "SELECT CONSTRAINT_SCHEMA, TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS "
                    "WHERE UNIQUE_CONSTRAINT_SCHEMA = %s AND REFERENCED_TABLE_NAME = %s",
                    (database, table),
                )
                found |= {(str(schema), str(child)) for schema, child in cursor.fetchall()}
        with self._guard:
            return {child for child in found if child not in self._installed}

    def _admin_connection(self) -> pymysql.connections.Connection[Any]:
        if self._admin is None or not self._admin.open:
            self._admin = self.upstream.connect()
            with self._admin.cursor() as cursor:
                cursor.execute("SET SESSION lock_wait_timeout = 2")
        return self._admin

    # -- connections -------------------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            listener = self._listener
            if listener is None:
                return
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection((self.upstream.host, self.upstream.port), timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            session = _Session(self, client, server)
            with self._guard:
                self._sessions.add(session)
            session.start()

    def forget(self, session: _Session) -> None:
        with self._guard:
            self._sessions.discard(session)


@dataclass(eq=False)
class _Session:
    """One relayed connection: the client's packets to the server (rewritten where needed), and the
    server's back (less the answers to the relay's own statements)."""

    relay: TiDBRelay
    client: socket.socket
    server: socket.socket
    database: str | None = None
    _swallow: int = 0  # answers to the relay's own statements still to drop
    _ddl: set[tuple[str, str]] = field(default_factory=set)  # tables the statement in flight reshapes
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False
    _tls: bool = False  # the client asked for TLS: bytes pass through unread from then on

    def start(self) -> None:
        threading.Thread(target=self._client_to_server, name="tidb-relay-in", daemon=True).start()
        threading.Thread(target=self._server_to_client, name="tidb-relay-out", daemon=True).start()

    def close(self) -> None:
        with self._guard:
            if self._closed:
                return
            self._closed = True
        for sock in (self.client, self.server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.relay.forget(self)

    # -- client -> server ----------------------------------------------------------------------------

    def _client_to_server(self) -> None:
        reader = PacketReader(self.client)
        try:
            first = reader.packet()
            if first is None:
                return
            seq, payload = first
            if is_ssl_request(payload):
                self._tls = True
                self.server.sendall(frame(seq, payload))
                self._pipe(self.client, self.server)  # TLS: passed through, unchanged
                return
            self.database = handshake_database(payload)
            self.server.sendall(frame(seq, payload))
            while True:
                packet = reader.command()
                if packet is None:
                    return
                seq, payload = packet
                if seq != 0:  # authentication continues
                    self.server.sendall(frames(seq, payload))
                    continue
                self._command(payload)
        except OSError:
            return
        finally:
            self._end_of_ddl()
            self.close()

    def _command(self, payload: bytes) -> None:
        self._end_of_ddl()  # the previous statement has been answered: its tables are settled
        if payload[:1] == bytes([_COM_INIT_DB]):
            self.database = payload[1:].decode(errors="replace")
        if payload[:1] != bytes([_COM_QUERY]):
            self.relay.install_checks(set())
            self.server.sendall(frames(0, payload))
            return
        text = payload[1:].decode("utf-8", "surrogateescape")
        changed = rewrite(text, GET_LOCK_FUNCTION)
        if changed.database:
            self.database = changed.database
        self.relay.install_checks({(db or self.database or "", table) for db, table in changed.written})
        if changed.writes:
            with self._guard:
                self._swallow += 1
            self.server.sendall(frames(0, bytes([_COM_QUERY]) + self.relay.reset_statement()))
        if changed.tables:
            with self._guard:
                self._ddl = {(db or self.database or "", table) for db, table in changed.tables}
        body = bytes([_COM_QUERY]) + changed.sql.encode("utf-8", "surrogateescape")
        if packet_count(body) != packet_count(payload):
            body = payload  # the answer's sequence numbers must stay where the client expects them
        self.server.sendall(frames(0, body))

    def _end_of_ddl(self) -> None:
        with self._guard:
            tables, self._ddl = self._ddl, set()
        if tables:
            self.relay.mark_changed(tables)

    # -- server -> client ----------------------------------------------------------------------------

    def _server_to_client(self) -> None:
        reader = PacketReader(self.server)
        try:
            while True:
                if self._tls:
                    self.client.sendall(reader.drain())
                    self._pipe(self.server, self.client)
                    return
                chunk = reader.available(lambda: self._tls)
                if chunk is None:
                    return
                out = bytearray()
                for raw, payload in chunk:
                    if not self._dropped(payload):
                        out += raw
                if out:
                    self.client.sendall(out)
        except OSError:
            return
        finally:
            self.close()

    def _dropped(self, payload: bytes) -> bool:
        """True for the answer to the relay's own statement. Notes the end of a reshaping statement's
        answer (its last OK), so the tables' checks are made again before the client hears it."""
        with self._guard:
            if self._swallow:
                self._swallow -= 1
                return True
            if not self._ddl:
                return False
            head = payload[:1]
            if head == b"\x00" and ok_status(payload) & _MORE_RESULTS:
                return False
            if head not in (b"\x00", b"\xff"):
                return False  # a result set: settled when the client sends its next command
            tables, self._ddl = self._ddl, set()
        self.relay.mark_changed(tables)
        return False

    def _pipe(self, source: socket.socket, target: socket.socket) -> None:
        while True:
            data = source.recv(65536)
            if not data:
                return
            target.sendall(data)
