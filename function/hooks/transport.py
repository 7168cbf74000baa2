"""One HTTP POST of a webhook: to a checked address, within a hard time limit, reading little.

- The host is resolved and checked once (``function.hooks.guard``) and the socket connects to one of
  those checked addresses; TLS then verifies the certificate for the URL's host name (SNI too), so the
  request reaches the server the URL names, and nothing else.
- Time-outs: 2 s to connect, 5 s for the whole attempt (connect, TLS, sending, the answer's head and
  its first kilobyte). The total is enforced by closing the socket when it is up, so a server that
  answers one byte at a time cannot hold the function.
- No redirect is followed: a 3xx is an answer like any other, and not a success.
- At most ``answer_cap`` bytes of the body are read (the first kilobyte, kept in the attempt's record);
  the rest is never read. Headers are bounded by ``http.client`` (100 lines of 64 KB at most).
- Through ``HTTPS_PROXY`` (unless ``NO_PROXY`` names the host), with CONNECT to the checked address, not
  to the name: the proxy never resolves it either.
"""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from function.errors import HookUrlRefused
from function.hooks.guard import (
    AddressPolicy,
    Resolver,
    Target,
    checked_addresses,
    parse_target,
    system_resolver,
)
from function.net.proxy import bypasses_proxy, parse_no_proxy

CONNECT_TIMEOUT_S = 2.0
TOTAL_TIMEOUT_S = 5.0
ANSWER_CAP = 1024
USER_AGENT = "blog-api-webhooks/1"
_PROXY_ANSWER_MAX = 8192

Connector = Callable[[tuple[str, int], float], socket.socket]


@dataclass(frozen=True)
class Answer:
    """What one attempt got: a status and the first bytes of the body, or why there was no answer."""

    status: int | None
    body: bytes
    duration_ms: float
    error: str | None = None  # "timed out after 5 s", "connection reset", "refused: ..."

    @property
    def ok(self) -> bool:
        """Only a 2xx answer is a delivery; a 3xx is not followed and counts as a failure."""
        return self.error is None and self.status is not None and 200 <= self.status < 300

    def describe(self) -> str:
        if self.error is not None:
            return self.error
        if self.status is not None and 300 <= self.status < 400:
            return f"HTTP {self.status}: redirect not followed"
        return f"HTTP {self.status}"


class _TimedOut(Exception):
    """The whole attempt's time was up (the socket was closed under it)."""


class _ConnectTimedOut(Exception):
    """No checked address accepted the connection within the connect time-out."""


class Transport:
    """POSTs webhook bodies under the rules above. ``resolver`` and ``ssl_context`` are passed in so
    tests decide what a name resolves to and which certificate authority is trusted."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        resolver: Resolver = system_resolver,
        ssl_context: ssl.SSLContext | None = None,
        https_proxy: str | None = None,
        no_proxy: Sequence[str] = (),
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        total_timeout_s: float = TOTAL_TIMEOUT_S,
        answer_cap: int = ANSWER_CAP,
        connector: Connector = socket.create_connection,
    ) -> None:
        self.policy = policy
        self._resolver = resolver
        self._ssl_context = ssl_context
        self._proxy = _proxy_of(https_proxy)
        self._no_proxy = parse_no_proxy(list(no_proxy))
        self._connect_timeout_s = connect_timeout_s
        self.total_timeout_s = total_timeout_s
        self._answer_cap = answer_cap
        self._connect = connector

    def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Answer:
        """One attempt; never raises for anything the network or the URL does (the Answer says)."""
        started = time.monotonic()
        try:
            target = parse_target(url)
            addresses = checked_addresses(target, self.policy, self._resolver)
        except HookUrlRefused as exc:
            return Answer(None, b"", _ms(started), f"refused: {exc}")
        deadline = started + self.total_timeout_s
        try:
            status, answer = self._exchange(target, addresses, headers, body, deadline)
        except (_TimedOut, _ConnectTimedOut, OSError, http.client.HTTPException) as exc:
            return Answer(None, b"", _ms(started), self._failure(exc))
        return Answer(status, answer, _ms(started))

    def _failure(self, exc: BaseException) -> str:
        """The attempt's error as one line that names no URL path, header or secret."""
        if isinstance(exc, _TimedOut):
            return f"timed out after {self.total_timeout_s:g} s"
        if isinstance(exc, _ConnectTimedOut):
            return f"connect timed out after {self._connect_timeout_s:g} s"
        if isinstance(exc, ssl.SSLCertVerificationError):
            return f"TLS certificate refused: {exc.verify_message}"
        if isinstance(exc, ssl.SSLError):
            return f"TLS failed: {exc.reason or type(exc).__name__}"
        if isinstance(exc, http.client.RemoteDisconnected):
            return "closed without an answer"
        if isinstance(exc, ConnectionResetError | BrokenPipeError):
            return "connection reset"
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused"
        if isinstance(exc, TimeoutError):
            return "timed out"
        if isinstance(exc, http.client.HTTPException):
            return f"not an HTTP answer ({type(exc).__name__})"
        if isinstance(exc, OSError):
            return f"network error ({type(exc).__name__}: {exc.strerror or exc})"
        return type(exc).__name__

    def _exchange(
        self,
        target: Target,
        addresses: Sequence[str],
        headers: Mapping[str, str],
        body: bytes,
        deadline: float,
    ) -> tuple[int, bytes]:
        sock = self._open(target, addresses, deadline)
        expired = threading.Event()

        def cut() -> None:
            expired.set()
            _shut(sock)

        watchdog = threading.Timer(max(deadline - time.monotonic(), 0.0), cut)
        watchdog.daemon = True
        watchdog.start()
        try:
            if target.scheme == "https":
                sock = self._tls(sock, target)
            connection = _OnSocket(target.host, target.port, sock)
            try:
                connection.request("POST", target.path, body=body, headers=self._headers(headers))
                response = connection.getresponse()
                answer = response.read(self._answer_cap)
                if expired.is_set():
                    raise _TimedOut  # the answer ended because the socket was cut: not an answer
                return response.status, answer
            finally:
                connection.close()
        except (OSError, http.client.HTTPException):
            if expired.is_set():
                raise _TimedOut from None
            raise
        finally:
            watchdog.cancel()
            _shut(sock)
            sock.close()

    def _open(self, target: Target, addresses: Sequence[str], deadline: float) -> socket.socket:
        """A TCP connection to the first checked address that answers (or, through the proxy, a
        CONNECT tunnel to it), within the connect time-out and the total."""
        through_proxy = (
            self._proxy is not None
            and target.scheme == "https"
            and not bypasses_proxy(target.host, target.port, self._no_proxy)
        )
        last: OSError | None = None
        for address in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _TimedOut
            timeout = min(self._connect_timeout_s, remaining)
            try:
                if through_proxy:
                    return self._tunnel(address, target.port, timeout, deadline)
                sock = self._connect((address, target.port), timeout)
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                return sock
            except OSError as exc:
                last = exc
        if last is None or isinstance(last, TimeoutError):
            raise _ConnectTimedOut
        raise last

    def _tunnel(self, address: str, port: int, timeout: float, deadline: float) -> socket.socket:
        assert self._proxy is not None
        host, proxy_port, authorization = self._proxy
        sock = self._connect((host, proxy_port), timeout)
        try:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            authority = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
            request = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n"
            if authorization:
                request += f"Proxy-Authorization: {authorization}\r\n"
            sock.sendall((request + "\r\n").encode("ascii"))
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(1024)
                if not chunk or len(head) > _PROXY_ANSWER_MAX:
                    raise ConnectionResetError("the proxy closed the tunnel")
                head += chunk
            status_line = head.split(b"\r\n", 1)[0].split()
            if len(status_line) < 2 or status_line[1] != b"200":
                raise OSError(f"the proxy refused the tunnel ({b' '.join(status_line[1:2]).decode() or '?'})")
            return sock
        except BaseException:
            sock.close()
            raise

    def _tls(self, sock: socket.socket, target: Target) -> socket.socket:
        context = self._ssl_context or ssl.create_default_context()
        return context.wrap_socket(sock, server_hostname=target.host)

    @staticmethod
    def _headers(headers: Mapping[str, str]) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "Connection": "close",
            **headers,
        }


class _OnSocket(http.client.HTTPConnection):
    """``http.client`` on a socket opened (and checked) beforehand: it never resolves or connects."""

    def __init__(self, host: str, port: int, sock: socket.socket) -> None:
        super().__init__(host, port)
        self.sock = sock

    def connect(self) -> None:  # the socket is given; reconnecting would skip the checks
        raise ConnectionResetError("the connection was closed")


def _shut(sock: Any) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed or never connected


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def _proxy_of(url: str | None) -> tuple[str, int, str | None] | None:
    """(host, port, Proxy-Authorization value) of HTTPS_PROXY, or None."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else "http://" + url)
    if not parts.hostname:
        return None
    authorization = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode("ascii")
    return parts.hostname, parts.port or 3128, authorization
