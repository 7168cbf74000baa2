"""A small outbound HTTP client on urllib3 for GitHub (and anything else blog-api calls over HTTP).

What it promises, on every call:

- a connect time-out and a read time-out (per socket operation), so a hung peer or proxy cannot hang a
  Lambda;
- retries with exponential back-off on connection errors, read time-outs and 429/500/502/503/504 (and a 403
  that carries ``Retry-After``, GitHub's secondary rate limit), at most ``attempts`` tries in all;
  ``Retry-After`` is honoured but capped at ``retry_after_max`` seconds, and an unparseable one falls back
  to the back-off;
- worst case per call: ``attempts * (connect_timeout + read_timeout)`` plus the sleeps between tries;
- redirects followed (at most ``max_redirects``), with ``Authorization`` and ``Cookie`` dropped whenever the
  next hop is another origin (scheme, host or port differ);
- ``https://`` only (plain ``http://`` only to this machine, for tests' stand-ins), on every hop: what it
  sends carries credentials (tokens, the App's JWT, signed download URLs);
- an explicit proxy: ``https_proxy`` for ``https://`` targets, ``http_proxy`` for ``http://`` targets, both
  bypassed for hosts in ``no_proxy`` (see :func:`bypasses_proxy`);
- the result is a status, headers and body bytes; only a failure to get any answer raises (``HttpError``).

Nothing is logged but method, host, path (never the query string) and status; headers never are, so
tokens cannot leak through this module.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote, urljoin, urlsplit

import urllib3
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import InvalidHeader, MaxRetryError, ProtocolError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util.retry import Retry

from function.errors import BodyTooLarge, HttpError, HttpTimeout
from function.net.proxy import bypasses_proxy, parse_no_proxy
from shared.runtime_settings import credential_url_problem

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Dropped on a redirect to another origin: credentials for one host must never reach another.
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
# A body bigger than this is refused whoever asked: API answers (tree listings of large repositories
# included) stay far below it.
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
# Wire bytes read per step. urllib3 decodes gzip/deflate per step, so one step can expand at most by
# the format's ratio (~1,000x): a few MB of memory at worst, then the limit stops the read.
_READ_STEP = 16 * 1024


@dataclass(frozen=True)
class HttpResponse:
    """A complete answer. ``headers`` is case-insensitive; ``url`` is the last URL after redirects."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str

    def json(self) -> Any:
        """The body parsed as JSON; raises ``ValueError`` when it is not JSON."""
        return json.loads(self.body)


class Readable(Protocol):
    def read(self, amt: int | None = None, /) -> bytes: ...


@dataclass(frozen=True)
class HttpStream:
    """An answer whose body is read on demand from ``raw`` (valid inside the ``stream`` block only)."""

    status: int
    headers: Mapping[str, str]
    raw: Readable
    url: str


class _BoundedRetry(Retry):
    """urllib3's Retry with a capped, fault-tolerant ``Retry-After``.

    A huge value (or a date far ahead) would otherwise stall a Lambda for hours, and an unparseable one
    would raise out of urllib3 instead of falling back to the back-off.
    """

    # 403 with Retry-After is how GitHub signals its secondary rate limit.
    RETRY_AFTER_STATUS_CODES = frozenset({403, 413, 429, 503})

    def __init__(self, *args: Any, retry_after_cap: float = 20.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_cap = retry_after_cap

    def new(self, **kw: Any) -> _BoundedRetry:
        kw.setdefault("retry_after_cap", self.retry_after_cap)
        return super().new(**kw)

    def get_retry_after(self, response: Any) -> float | None:
        try:
            seconds = super().get_retry_after(response)
        except InvalidHeader:
            return None
        if seconds is None:
            return None
        return min(max(float(seconds), 0.0), self.retry_after_cap)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code == 403:
            # Only the rate-limit 403 is worth another try; a plain 403 is a permission answer.
            return has_retry_after and self._is_method_retryable(method) and bool(self.total)
        return super().is_retry(method, status_code, has_retry_after)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _redacted(url: str) -> str:
    """host + path, without the query string (GitHub's codeload URLs carry a token there)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def _proxy_manager(proxy_url: str, pool_kw: Mapping[str, Any]) -> urllib3.ProxyManager:
    if "://" not in proxy_url:
        proxy_url = "http://" + proxy_url
    parts = urlsplit(proxy_url)
    proxy_headers: dict[str, str] = {}
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        proxy_headers = urllib3.make_headers(proxy_basic_auth=credentials)
        proxy_url = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib3.ProxyManager(proxy_url, proxy_headers=proxy_headers, **pool_kw)


class HttpClient:
    """Outbound HTTP with time-outs, bounded retries, a proxy and safe redirects (see module doc).

    Pools are built lazily on the first call, one per route kind (direct, via the http proxy, via the
    https proxy), and reused; ``close()`` (or ``with``) releases them. Thread-safe: urllib3 pools are.
    """

    def __init__(
        self,
        *,
        connect_timeout: float = 3.0,
        read_timeout: float = 10.0,
        attempts: int = 4,
        backoff_factor: float = 0.5,
        backoff_max: float = 8.0,
        retry_after_max: float = 20.0,
        https_proxy: str | None = None,
        http_proxy: str | None = None,
        no_proxy: str | Iterable[str] | None = None,
        max_redirects: int = 5,
        pool_maxsize: int = 16,
        user_agent: str = "blog-api",
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.attempts = attempts
        self.backoff_factor = backoff_factor
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.https_proxy = https_proxy or None
        self.http_proxy = http_proxy or None
        self.no_proxy = parse_no_proxy(no_proxy)
        self.max_redirects = max_redirects
        self.pool_maxsize = pool_maxsize
        self.user_agent = user_agent
        self._managers: dict[str, urllib3.PoolManager] = {}

    # -- pools -------------------------------------------------------------------------------------

    def _manager_for(self, url: str) -> urllib3.PoolManager:
        scheme, host, port = _origin(url)
        proxy = self.https_proxy if scheme == "https" else self.http_proxy
        if proxy and bypasses_proxy(host, port, self.no_proxy):
            proxy = None
        key = f"proxy:{proxy}" if proxy else "direct"
        manager = self._managers.get(key)
        if manager is None:
            # block=False: a burst beyond maxsize opens extra connections rather than waiting.
            pool_kw: dict[str, Any] = {"maxsize": self.pool_maxsize, "block": False}
            manager = _proxy_manager(proxy, pool_kw) if proxy else urllib3.PoolManager(**pool_kw)
            # setdefault: two threads racing here keep one manager; the loser's is empty, nothing leaks.
            manager = self._managers.setdefault(key, manager)
        return manager

    def close(self) -> None:
        """Close every pooled connection. The client can still be used afterwards (pools are rebuilt)."""
        managers, self._managers = self._managers, {}
        for manager in managers.values():
            manager.clear()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls -------------------------------------------------------------------------------------

    def _retry(self) -> _BoundedRetry:
        return _BoundedRetry(
            total=self.attempts - 1,
            redirect=False,  # redirects are followed by _open, which decides about credentials
            status_forcelist=RETRY_STATUSES,
            # Every call we make is safe to repeat (GETs, and token creation, which only mints another).
            allowed_methods=None,
            backoff_factor=self.backoff_factor,
            backoff_max=self.backoff_max,
            raise_on_status=False,
            respect_retry_after_header=True,
            retry_after_cap=self.retry_after_max,
        )

    def _open(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        preload: bool,
    ) -> tuple[Any, str]:
        """One logical call: retries per hop, redirects followed here. Returns a urllib3 response and
        the URL that answered it."""
        send = {"User-Agent": self.user_agent, "Accept-Encoding": "gzip"}
        send.update(headers or {})
        timeout = urllib3.Timeout(connect=self.connect_timeout, read=self.read_timeout)
        started = time.monotonic()
        for _hop in range(self.max_redirects + 1):
            if credential_url_problem(url) is not None:
                raise HttpError(
                    f"{method} {_redacted(url)}: refused, not https (it would carry credentials in clear)"
                )
            try:
                response = self._manager_for(url).urlopen(
                    method,
                    url,
                    body=body,
                    headers=send,
                    retries=self._retry(),
                    redirect=False,
                    timeout=timeout,
                    preload_content=preload,
                )
            except MaxRetryError as exc:
                raise _transport_error(method, url, exc.reason) from None
            except (ProtocolError, Urllib3Error, OSError) as exc:
                raise _transport_error(method, url, exc) from None
            logger.debug(
                "HTTP request",
                extra={
                    "method": method,
                    "url": _redacted(url),
                    "status": response.status,
                    "duration_ms": round((time.monotonic() - started) * 1000),
                },
            )
            location = response.headers.get("Location")
            if response.status not in REDIRECT_STATUSES or not location:
                return response, url
            response.drain_conn()
            response.release_conn()
            next_url = urljoin(url, location)
            if _origin(next_url) != _origin(url):
                send = {k: v for k, v in send.items() if k.lower() not in _CREDENTIAL_HEADERS}
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method, body = "GET", None
            url = next_url
        raise HttpError(f"{method} {_redacted(url)}: more than {self.max_redirects} redirects")

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> HttpResponse:
        """Send one request (with retries and redirects) and read the whole answer, at most
        ``max_bytes`` of it once decoded.

        Any HTTP status is returned (after retries for the retryable ones); raises ``HttpTimeout`` or
        ``HttpError`` only when no answer could be had, ``BodyTooLarge`` past ``max_bytes``.
        """
        response, final_url = self._open(method, url, headers, body, preload=False)
        try:
            data = _read_capped(_GuardedReader(response, method, final_url), max_bytes, method, final_url)
        finally:
            response.close()
            response.release_conn()
        return HttpResponse(status=response.status, headers=response.headers, body=data, url=final_url)

    @contextlib.contextmanager
    def stream(
        self, method: str, url: str, *, headers: Mapping[str, str] | None = None
    ) -> Iterator[HttpStream]:
        """Like ``request`` but the body is read on demand, for large downloads (tarballs).

        The read time-out applies to every read inside the block; a failed read raises ``HttpTimeout`` or
        ``HttpError`` (not retried: the caller decides). The connection is closed when the block ends.
        """
        response, final_url = self._open(method, url, headers, None, preload=False)
        try:
            reader = _GuardedReader(response, method, final_url)
            yield HttpStream(status=response.status, headers=response.headers, raw=reader, url=final_url)
        finally:
            # An unfinished body cannot go back to the pool: close that connection instead of draining it.
            response.close()
            response.release_conn()


def _read_capped(reader: Any, max_bytes: int, method: str, url: str) -> bytes:
    """Read all of ``reader`` (Content-Encoding decoded), stopping as soon as it passes ``max_bytes``."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = reader.read(_READ_STEP)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes:
            raise BodyTooLarge(f"{method} {_redacted(url)}: answer larger than {max_bytes} bytes")
        chunks.append(chunk)


class CappedReader:
    """A streamed body that raises ``BodyTooLarge`` once more than ``max_bytes`` were read from it."""

    def __init__(self, raw: Readable, max_bytes: int, what: str) -> None:
        self._raw = raw
        self._left = max_bytes
        self._max = max_bytes
        self._what = what

    def read(self, amt: int | None = None, /) -> bytes:
        if amt is None or amt < 0:
            chunks = []
            while chunk := self.read(_READ_STEP):
                chunks.append(chunk)
            return b"".join(chunks)
        data = self._raw.read(min(amt, 1024 * 1024))
        self._left -= len(data)
        if self._left < 0:
            raise BodyTooLarge(f"{self._what}: larger than {self._max} bytes")
        return data


class _GuardedReader:
    """A streamed body whose read errors surface as this module's exceptions, not urllib3's."""

    def __init__(self, response: Any, method: str, url: str) -> None:
        self._response = response
        self._method = method
        self._url = url

    def read(self, amt: int | None = None, /) -> bytes:
        try:
            data: bytes = self._response.read(amt)
        except (Urllib3Error, OSError) as exc:
            raise _transport_error(self._method, self._url, exc) from None
        return data


def _transport_error(method: str, url: str, reason: BaseException | None) -> HttpError:
    kind = type(reason).__name__ if reason is not None else "unknown error"
    message = f"{method} {_redacted(url)}: no answer ({kind})"
    if isinstance(reason, Urllib3Timeout) or "timed out" in str(reason).lower():
        return HttpTimeout(message)
    return HttpError(message)
