"""The MySQL protocol as the TiDB-faithful relay (``tests.kit.tidb_proxy``) reads it: packets of 3 bytes
of length, 1 of sequence and the payload; a command of 16 MiB and more in several; the client's
handshake (the database it names, or a request for TLS); an OK packet's status flags."""

from __future__ import annotations

import socket
from collections.abc import Callable

from pymysql.constants import CLIENT

MAX_PACKET = 0xFFFFFF
SSL_REQUEST_LENGTH = 32


class PacketReader:
    """MySQL packets from a socket."""

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
        while len(parts[-1]) == MAX_PACKET:
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


def frame(seq: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload


def frames(seq: int, payload: bytes) -> bytes:
    """``payload`` as packets from ``seq`` on, split at 16 MiB as the protocol wants."""
    out = bytearray()
    start = 0
    while True:
        part = payload[start : start + MAX_PACKET]
        out += frame(seq, part)
        seq += 1
        start += MAX_PACKET
        if len(part) < MAX_PACKET:
            return bytes(out)


def packet_count(payload: bytes) -> int:
    return len(payload) // MAX_PACKET + 1


def is_ssl_request(payload: bytes) -> bool:
    capabilities = int.from_bytes(payload[:4], "little") if len(payload) >= 4 else 0
    return bool(capabilities & CLIENT.SSL) and len(payload) == SSL_REQUEST_LENGTH


def handshake_database(payload: bytes) -> str | None:
    """The database a HandshakeResponse41 names, if any."""
    capabilities = int.from_bytes(payload[:4], "little")
    if not capabilities & CLIENT.CONNECT_WITH_DB:
        return None
    pos = payload.index(b"\x00", 32) + 1  # after the user name
    if capabilities & CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA:
        length, pos = lenenc(payload, pos)
        pos += length
    elif capabilities & CLIENT.SECURE_CONNECTION:
        pos += 1 + payload[pos]
    else:
        pos = payload.index(b"\x00", pos) + 1
    end = payload.find(b"\x00", pos)
    name = payload[pos : end if end >= 0 else len(payload)].decode(errors="replace")
    return name or None


def lenenc(payload: bytes, pos: int) -> tuple[int, int]:
    first = payload[pos]
    if first < 0xFB:
        return first, pos + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(payload[pos + 1 : pos + 1 + width], "little"), pos + 1 + width


def ok_status(payload: bytes) -> int:
    """The status flags of an OK packet (after affected rows and last insert id)."""
    _, pos = lenenc(payload, 1)
    _, pos = lenenc(payload, pos)
    return int.from_bytes(payload[pos : pos + 2], "little") if len(payload) >= pos + 2 else 0
