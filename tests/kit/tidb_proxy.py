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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pymysql
from pymysql.constants import CLIENT

from tests.kit.mariadb import ServerInfo
from tests.kit.tidb_sql import rewrite
from tests.kit.tidb_triggers import ENTRY_LIMIT, TXN_LIMIT, Table, trigger_statements

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

_MAX_PACKET = 0xFFFFFF
_COM_QUIT, _COM_INIT_DB, _COM_QUERY = 0x01, 0x02, 0x03
_MORE_RESULTS = 0x0008
_SSL_REQUEST_LENGTH = 32


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


def read_table(admin: pymysql.connections.Connection[Any], database: str, table: str) -> Table | None:
    """The columns and indexes of ``database.table`` as the checks need them; None when it is gone (or
    is a view)."""
    with admin.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (database, table),
        )
        kind = cursor.fetchone()
        if kind is None or kind[0] != "BASE TABLE":
            return None
        cursor.execute(
            "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
            (database, table),
        )
        columns = [(str(name), str(kind)) for name, kind in cursor.fetchall()]
        cursor.execute(
            "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY INDEX_NAME, SEQ_IN_INDEX",
            (database, table),
        )
        indexes: dict[str, list[str]] = {}
        for index, column in cursor.fetchall():
            indexes.setdefault(str(index), []).append(str(column))
    primary = indexes.pop("PRIMARY", [])
    return Table(database, table, columns, primary, list(indexes.values()))


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
        reader = _PacketReader(self.client)
        try:
            first = reader.packet()
            if first is None:
                return
            seq, payload = first
            if _is_ssl_request(payload):
                self._tls = True
                self.server.sendall(_frame(seq, payload))
                self._pipe(self.client, self.server)  # TLS: passed through, unchanged
                return
            self.database = _handshake_database(payload)
            self.server.sendall(_frame(seq, payload))
            while True:
                packet = reader.command()
                if packet is None:
                    return
                seq, payload = packet
                if seq != 0:  # authentication continues
                    self.server.sendall(_frames(seq, payload))
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
            self.server.sendall(_frames(0, payload))
            return
        text = payload[1:].decode("utf-8", "surrogateescape")
        changed = rewrite(text, GET_LOCK_FUNCTION)
        if changed.database:
            self.database = changed.database
        self.relay.install_checks({(db or self.database or "", table) for db, table in changed.written})
        if changed.writes:
            with self._guard:
                self._swallow += 1
            self.server.sendall(_frames(0, bytes([_COM_QUERY]) + self.relay.reset_statement()))
        if changed.tables:
            with self._guard:
                self._ddl = {(db or self.database or "", table) for db, table in changed.tables}
        body = bytes([_COM_QUERY]) + changed.sql.encode("utf-8", "surrogateescape")
        if _packet_count(body) != _packet_count(payload):
            body = payload  # the answer's sequence numbers must stay where the client expects them
        self.server.sendall(_frames(0, body))

    def _end_of_ddl(self) -> None:
        with self._guard:
            tables, self._ddl = self._ddl, set()
        if tables:
            self.relay.mark_changed(tables)

    # -- server -> client ----------------------------------------------------------------------------

    def _server_to_client(self) -> None:
        reader = _PacketReader(self.server)
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
            if head == b"\x00" and _ok_status(payload) & _MORE_RESULTS:
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


class _PacketReader:
    """MySQL packets from a socket: 3 bytes of length, 1 of sequence, the payload."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = bytearray()

    def _fill(self) -> bool:
        data = self._sock.recv(262144)
        if not data:
            return False
        self._buffer += data
        return True

    def _complete(self) -> tuple[bytes, int, bytes] | None:
        if len(self._buffer) < 4:
            return None
        length = int.from_bytes(self._buffer[:3], "little")
        if len(self._buffer) < 4 + length:
            return None
        raw = bytes(self._buffer[: 4 + length])
        del self._buffer[: 4 + length]
        return raw, raw[3], raw[4:]

    def packet(self) -> tuple[int, bytes] | None:
        """The next packet (sequence, payload); None at the end of the stream."""
        while True:
            found = self._complete()
            if found is not None:
                return found[1], found[2]
            if not self._fill():
                return None

    def command(self) -> tuple[int, bytes] | None:
        """The next packet with its continuation packets (a payload of 16 MiB and more), joined."""
        first = self.packet()
        if first is None:
            return None
        seq, payload = first
        parts = [payload]
        while len(parts[-1]) == _MAX_PACKET:
            more = self.packet()
            if more is None:
                return None
            parts.append(more[1])
        return seq, b"".join(parts)

    def drain(self) -> bytes:
        """What was received and not read yet, as it came."""
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    def available(self, stop: Callable[[], bool]) -> list[tuple[bytes, bytes]] | None:
        """Every complete packet received so far (waiting for one at least): (raw bytes, payload);
        none when ``stop()`` turns true (the bytes are then left for ``drain``)."""
        found: list[tuple[bytes, bytes]] = []
        while True:
            if stop():
                return found
            packet = self._complete()
            if packet is not None:
                found.append((packet[0], packet[2]))
                continue
            if found:
                return found
            if not self._fill():
                return None


def _frame(seq: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload


def _frames(seq: int, payload: bytes) -> bytes:
    """``payload`` as packets from ``seq`` on, split at 16 MiB as the protocol wants."""
    out = bytearray()
    start = 0
    while True:
        part = payload[start : start + _MAX_PACKET]
        out += _frame(seq, part)
        seq += 1
        start += _MAX_PACKET
        if len(part) < _MAX_PACKET:
            return bytes(out)


def _packet_count(payload: bytes) -> int:
    return len(payload) // _MAX_PACKET + 1


def _is_ssl_request(payload: bytes) -> bool:
    capabilities = int.from_bytes(payload[:4], "little") if len(payload) >= 4 else 0
    return bool(capabilities & CLIENT.SSL) and len(payload) == _SSL_REQUEST_LENGTH


def _handshake_database(payload: bytes) -> str | None:
    """The database a HandshakeResponse41 names, if any."""
    capabilities = int.from_bytes(payload[:4], "little")
    if not capabilities & CLIENT.CONNECT_WITH_DB:
        return None
    pos = payload.index(b"\x00", 32) + 1  # after the user name
    if capabilities & CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA:
        length, pos = _lenenc(payload, pos)
        pos += length
    elif capabilities & CLIENT.SECURE_CONNECTION:
        pos += 1 + payload[pos]
    else:
        pos = payload.index(b"\x00", pos) + 1
    end = payload.find(b"\x00", pos)
    name = payload[pos : end if end >= 0 else len(payload)].decode(errors="replace")
    return name or None


def _lenenc(payload: bytes, pos: int) -> tuple[int, int]:
    first = payload[pos]
    if first < 0xFB:
        return first, pos + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(payload[pos + 1 : pos + 1 + width], "little"), pos + 1 + width


def _ok_status(payload: bytes) -> int:
    """The status flags of an OK packet (after affected rows and last insert id)."""
    _, pos = _lenenc(payload, 1)
    _, pos = _lenenc(payload, pos)
    return int.from_bytes(payload[pos : pos + 2], "little") if len(payload) >= pos + 2 else 0
