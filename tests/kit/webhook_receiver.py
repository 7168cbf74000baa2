"""A front end's webhook receiver on loopback: records every request and answers as a test scripts it
(a status, a hang, a reset, a redirect, a slow drip), over HTTP or HTTPS with a test authority.

``verify(request, secret)`` checks a recorded request with the Standard Webhooks reference library
(``standardwebhooks``), as a real receiver would.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import socket
import socketserver
import ssl
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from standardwebhooks.webhooks import Webhook


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class Behaviour:
    """What the receiver does with one request."""

    kind: str = "answer"  # answer | hang | reset | drip | block
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    release: threading.Event | None = None


def answer(status: int = 200, body: bytes = b"ok", **headers: str) -> Behaviour:
    return Behaviour("answer", status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def redirect(location: str, status: int = 302) -> Behaviour:
    return Behaviour("answer", status, b"moved", {"Location": location})


def hang(seconds: float) -> Behaviour:
    """Read the request, then say nothing for ``seconds`` (the sender's time-out ends it first)."""
    return Behaviour("hang", seconds=seconds)


def drip(seconds: float) -> Behaviour:
    """Answer a status line, then one header byte every 0.1 s for ``seconds``: never a whole answer."""
    return Behaviour("drip", seconds=seconds)


def reset() -> Behaviour:
    """Read the request, then close the connection with a TCP reset."""
    return Behaviour("reset")


def block(release: threading.Event, status: int = 200) -> Behaviour:
    """Answer only once ``release`` is set (at most 10 s)."""
    return Behaviour("block", status, release=release)


class WebhookReceiver:
    """``script`` answers the requests in turn; once it is used up, every request gets ``then``."""

    def __init__(self, *, tls: ssl.SSLContext | None = None, then: Behaviour | None = None) -> None:
        self.received: list[Received] = []
        self.script: list[Behaviour] = []
        self.then = then or answer()
        self._tls = tls
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: socketserver.ThreadingTCPServer | None = None
        self.arrived = threading.Condition(self._lock)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def url(self, path: str = "/hooks", host: str = "127.0.0.1") -> str:
        scheme = "https" if self._tls else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                receiver._handle(self.request)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler, bind_and_activate=True)
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The requests, once at least ``count`` arrived (or the time-out passed)."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def _next(self) -> Behaviour:
        with self._lock:
            return self.script.pop(0) if self.script else self.then

    def _handle(self, sock: socket.socket) -> None:
        sock.settimeout(5)
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError):
                return  # the client refused our certificate
        request = _read_request(sock)
        if request is None:
            return
        with self.arrived:
            self.received.append(request)
            self.arrived.notify_all()
        self._act(sock, self._next())

    def _act(self, sock: socket.socket, behaviour: Behaviour) -> None:
        if behaviour.kind == "hang":
            self._stop.wait(behaviour.seconds)
            return
        if behaviour.kind == "reset":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
            return
        if behaviour.kind == "drip":
            with contextlib.suppress(OSError):
                sock.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                ends = time.monotonic() + behaviour.seconds
                while time.monotonic() < ends and not self._stop.is_set():
                    sock.sendall(b"a")
                    time.sleep(0.1)
            return
        if behaviour.kind == "block" and behaviour.release is not None:
            behaviour.release.wait(10)
        head = [
            f"HTTP/1.1 {behaviour.status} Whatever",
            f"Content-Length: {len(behaviour.body)}",
            "Connection: close",
        ]
        head += [f"{k}: {v}" for k, v in behaviour.headers.items()]
        with contextlib.suppress(OSError):
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + behaviour.body)


def _read_request(sock: socket.socket) -> Received | None:
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    except (OSError, ValueError):
        return None
    return Received(method, path, headers, body)


def verify(request: Received, secret: str) -> Any:
    """The body as the Standard Webhooks library verifies it (raises WebhookVerificationError)."""
    return Webhook(secret).verify(request.body, request.headers)


@contextlib.contextmanager
def running(receiver: WebhookReceiver) -> Iterator[WebhookReceiver]:
    receiver.start()
    try:
        yield receiver
    finally:
        receiver.stop()


@dataclass(frozen=True)
class TestAuthority:
    """A certificate authority made for the run, and a server certificate it signed."""

    server: ssl.SSLContext  # for the receiver
    client: ssl.SSLContext  # trusts only this authority (for the sender)


def make_authority(folder: Path, names: tuple[str, ...] = ("hooks.test",)) -> TestAuthority:
    """A CA and a certificate for ``names`` and 127.0.0.1, written under ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "blog-api test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "server.pem").write_bytes(cert.public_bytes(pem))
    (folder / "server.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(folder / "server.pem", folder / "server.key")
    client = ssl.create_default_context(cafile=str(folder / "ca.pem"))
    return TestAuthority(server, client)
