"""A local stand-in for the Lambda Invoke API, with the faults moto cannot produce.

Only ``POST /2015-03-31/functions/<name>/invocations`` is served, enough for boto3's ``invoke``. The
test picks the behaviour: accept (202), throttle every call (429 ``TooManyRequestsException``),
refuse payloads over a size (413 ``RequestEntityTooLargeException``), or accept the connection and
never answer. Every call is recorded, so a test can count attempts and look at what was sent.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

INVOKE_PATH = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations$")
# A hanging call is released when the stand-in closes, and never waits longer than this.
MAX_HANG_S = 30.0


@dataclass(frozen=True)
class Call:
    """One request the stand-in received."""

    function_name: str
    invocation_type: str | None
    qualifier: str | None  # ?Qualifier= (an alias or version), None for the function itself
    body: bytes
    at: float  # time.perf_counter() when the request was read


class LambdaApiStandIn:
    """``url`` is the endpoint to give boto3; ``calls`` what arrived, in order."""

    def __init__(self, *, throttle: bool = False, max_payload: int | None = None, hang: bool = False) -> None:
        self.throttle = throttle
        self.max_payload = max_payload
        self.hang = hang
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="lambda-stand-in",
            daemon=True,
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> LambdaApiStandIn:
        self._thread.start()
        return self

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep the test output clean

            def do_POST(self) -> None:
                match = INVOKE_PATH.match(self.path.split("?", 1)[0])
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if match is None:
                    self._error(404, "ResourceNotFoundException", f"no route for {self.path}")
                    return
                stand_in._record(
                    Call(
                        function_name=match["name"],
                        invocation_type=self.headers.get("X-Amz-Invocation-Type"),
                        qualifier=next(iter(parse_qs(urlsplit(self.path).query).get("Qualifier", [])), None),
                        body=body,
                        at=time.perf_counter(),
                    )
                )
                if stand_in.hang:
                    # Accept and never answer: only the client's read time-out ends the call.
                    stand_in._released.wait(MAX_HANG_S)
                    self.close_connection = True
                    return
                if stand_in.throttle:
                    self._error(429, "TooManyRequestsException", "Rate Exceeded.")
                    return
                if stand_in.max_payload is not None and len(body) > stand_in.max_payload:
                    self._error(
                        413,
                        "RequestEntityTooLargeException",
                        f"Request must be smaller than {stand_in.max_payload} bytes for the Invoke operation",
                    )
                    return
                self._send(202, b"")

            def _error(self, status: int, code: str, message: str) -> None:
                body = json.dumps({"Type": "User", "message": message}).encode()
                self._send(status, body, {"x-amzn-ErrorType": code, "Content-Type": "application/json"})

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("x-amzn-RequestId", "00000000-0000-4000-8000-000000000000")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler
