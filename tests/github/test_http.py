"""The outbound HTTP client: retries, Retry-After, time-outs, redirects and proxy choice."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from function.errors import HttpError, HttpTimeout
from function.github.http import HttpClient
from function.net.proxy import bypasses_proxy, parse_no_proxy
from tests.kit.github_standin import (
    GitHubStandIn,
    Handler,
    StandInRequest,
    StandInResponse,
    json_response,
)


def _ok(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
    return json_response({"ok": True, "authorization": request.headers.get("authorization")})


@pytest.fixture
def server() -> Iterator[GitHubStandIn]:
    """The stand-in with an open ``/ping`` route, so HTTP behaviour is tested without GitHub auth."""
    with GitHubStandIn() as standin:
        standin.add_route("GET", r"/ping", _ok, kind="ping", auth=None)
        standin.add_route("POST", r"/ping", _ok, kind="ping", auth=None)
        yield standin


@pytest.fixture
def client() -> Iterator[HttpClient]:
    with HttpClient(connect_timeout=1.0, read_timeout=0.5, attempts=3, backoff_factor=0.01) as http:
        yield http


def test_502_then_200_is_retried_and_returns_the_200(server: GitHubStandIn, client: HttpClient) -> None:
    server.fail("/ping", 502)

    response = client.request("GET", server.url + "/ping")

    assert response.status == 200
    assert response.json()["ok"] is True
    assert server.count("ping") == 2


def test_post_is_retried_too_because_our_posts_are_safe_to_repeat(
    server: GitHubStandIn, client: HttpClient
) -> None:
    server.fail("/ping", 503)

    assert client.request("POST", server.url + "/ping", body=b"{}").status == 200
    assert server.count("ping") == 2


def test_persistent_5xx_returns_the_last_answer_after_the_configured_attempts(
    server: GitHubStandIn, client: HttpClient
) -> None:
    server.fail("/ping", 502, times=None)

    response = client.request("GET", server.url + "/ping")

    assert response.status == 502
    assert server.count("ping") == 3


def test_429_waits_for_retry_after(server: GitHubStandIn, client: HttpClient) -> None:
    server.fail("/ping", 429, headers={"Retry-After": "1"})

    started = time.monotonic()
    response = client.request("GET", server.url + "/ping")
    waited = time.monotonic() - started

    assert response.status == 200
    assert 0.9 <= waited < 3.0


def test_403_with_retry_after_is_a_secondary_rate_limit_and_is_retried(
    server: GitHubStandIn, client: HttpClient
) -> None:
    server.fail("/ping", 403, headers={"Retry-After": "0"})

    assert client.request("GET", server.url + "/ping").status == 200


def test_plain_403_is_an_answer_not_retried(server: GitHubStandIn, client: HttpClient) -> None:
    server.fail("/ping", 403)

    assert client.request("GET", server.url + "/ping").status == 403
    assert server.count("ping") == 1


def test_huge_retry_after_is_capped(server: GitHubStandIn) -> None:
    # GIVEN a server asking for an hour's pause, and a client capping pauses at 0.3 s
    server.fail("/ping", 503, headers={"Retry-After": "3600"})
    with HttpClient(attempts=2, retry_after_max=0.3) as http:
        # WHEN the call is made
        started = time.monotonic()
        response = http.request("GET", server.url + "/ping")
        waited = time.monotonic() - started

    # THEN it paused about the cap, not the hour, and got through
    assert response.status == 200
    assert 0.25 <= waited < 2.0


def test_unparseable_retry_after_falls_back_to_back_off(server: GitHubStandIn, client: HttpClient) -> None:
    server.fail("/ping", 429, headers={"Retry-After": "soon, maybe"})

    started = time.monotonic()
    response = client.request("GET", server.url + "/ping")

    assert response.status == 200
    assert time.monotonic() - started < 1.0


def test_hung_server_times_out_within_the_read_time_out_per_attempt(server: GitHubStandIn) -> None:
    # GIVEN a server that never answers, and a client with 0.3 s read time-out and 2 attempts
    server.hang("/ping", 30, times=None)
    with HttpClient(read_timeout=0.3, attempts=2, backoff_factor=0.01) as http:
        # WHEN a call is made
        started = time.monotonic()
        with pytest.raises(HttpTimeout) as raised:
            http.request("GET", server.url + "/ping?secret=x")
        elapsed = time.monotonic() - started

    # THEN it gave up after about two read time-outs, and the message carries no query string
    assert elapsed < 0.3 * 2 + 1.0
    assert server.count("ping") == 2
    assert "secret" not in str(raised.value)


def test_refused_connection_raises_http_error() -> None:
    port = _free_port()  # nothing listens there once the probe socket is closed
    with HttpClient(attempts=2, backoff_factor=0.01) as http, pytest.raises(HttpError):
        http.request("GET", f"http://127.0.0.1:{port}/")


def _redirect_to(target: str) -> Handler:
    def handler(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        return StandInResponse(302, b"", {"Location": target})

    return handler


def test_redirect_to_another_host_drops_authorization(server: GitHubStandIn, client: HttpClient) -> None:
    # GIVEN a redirect from 127.0.0.1 to "localhost", another origin (same server underneath)
    away = _redirect_to(f"http://localhost:{server.port}/ping")
    server.add_route("GET", r"/away", away, kind="away", auth=None)

    # WHEN a call with Authorization follows it
    response = client.request("GET", server.url + "/away", headers={"Authorization": "Bearer s3cret"})

    # THEN the second hop did not carry the credential
    assert response.status == 200
    assert response.json()["authorization"] is None
    assert response.url == f"http://localhost:{server.port}/ping"


def test_redirect_on_the_same_origin_keeps_authorization(server: GitHubStandIn, client: HttpClient) -> None:
    server.add_route("GET", r"/here", _redirect_to("/ping"), kind="here", auth=None)

    response = client.request("GET", server.url + "/here", headers={"Authorization": "Bearer s3cret"})

    assert response.json()["authorization"] == "Bearer s3cret"


def test_redirect_loop_ends_with_http_error(server: GitHubStandIn) -> None:
    server.add_route("GET", r"/loop", _redirect_to("/loop"), kind="loop", auth=None)

    with HttpClient(max_redirects=3) as http, pytest.raises(HttpError, match="redirects"):
        http.request("GET", server.url + "/loop")
    assert server.count("loop") == 4


@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "bypass"),
    [
        ("api.github.com", 443, "api.github.com", True),
        ("API.GitHub.com", 443, "api.github.com", True),
        ("uploads.github.com", 443, "api.github.com", False),
        ("uploads.github.com", 443, ".github.com", True),
        ("github.com", 443, ".github.com", True),
        ("notgithub.com", 443, ".github.com", False),
        ("api.github.com", 443, "api.github.com:8443", False),
        ("api.github.com", 8443, "api.github.com:8443", True),
        ("127.0.0.1", 8080, "localhost", True),
        ("localhost", 8080, "127.0.0.1", True),
        ("::1", 8080, "localhost", True),
        ("127.0.0.1", 8080, "", False),
        ("example.com", 443, "*", True),
        ("lambda.eu-west-1.amazonaws.com", 443, "169.254.169.254, localhost", False),
    ],
)
def test_no_proxy_rules(host: str, port: int, no_proxy: str, bypass: bool) -> None:
    assert bypasses_proxy(host, port, parse_no_proxy(no_proxy)) is bypass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def forward_proxy() -> Iterator[str]:
    """A real proxy (proxy.py) on loopback; skipped when the package is missing."""
    executable = shutil.which("proxy", path=str(Path(sys.executable).parent))
    if executable is None:
        pytest.skip("proxy.py is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [
            executable,
            "--hostname",
            "127.0.0.1",
            "--port",
            str(port),
            "--num-workers",
            "1",
            "--num-acceptors",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.skip("proxy.py did not start")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_requests_go_through_the_proxy_unless_no_proxy_says_otherwise(
    server: GitHubStandIn, forward_proxy: str
) -> None:
    # The stand-in speaks plain HTTP, so this exercises the forwarding (http_proxy) path; an https
    # target would take the CONNECT path of the same ProxyManager.
    target = server.url + "/ping"

    # GIVEN a client with a proxy: the server sees the proxy's forwarding header
    with HttpClient(http_proxy=forward_proxy, attempts=1) as http:
        via_proxy = http.request("GET", target)
    proxied = server.requests[-1]

    # AND a client with the same proxy but NO_PROXY=localhost: loopback goes direct
    with HttpClient(http_proxy=forward_proxy, no_proxy="localhost", attempts=1) as http:
        direct = http.request("GET", target)
    bypassed = server.requests[-1]

    assert via_proxy.status == direct.status == 200
    assert "proxy.py" in proxied.headers.get("via", "")
    assert "via" not in bypassed.headers


def test_a_gzip_bomb_is_cut_at_the_limit_while_it_is_decoded(
    server: GitHubStandIn, client: HttpClient
) -> None:
    import gzip
    import tracemalloc

    from function.errors import BodyTooLarge

    # 256 MiB of zeros: about 250 KB on the wire, built before memory is measured.
    bomb = gzip.compress(b"\0" * (256 * 1024 * 1024), compresslevel=9)
    headers = {"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}
    server.add_route(
        "GET", r"/bomb", lambda r, m: StandInResponse(200, bomb, headers), kind="bomb", auth=None
    )
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge, match="larger than 1048576 bytes"):
            client.request("GET", server.url + "/bomb", max_bytes=1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Decoding stopped at the limit: a few MB, not the 256 MiB the body expands to.
    assert peak < 32 * 1024 * 1024
