"""The self-invoke through an HTTPS CONNECT proxy, as in production (a VPC without NAT, AWS reached only
through squid): proxy.py in front of moto_server over TLS, both real processes on loopback.

moto serves a self-signed certificate for 127.0.0.1 that the client trusts through ``AWS_CA_BUNDLE``
(``lambda_client_factory`` has no ``verify`` switch, and needs none): TLS is verified end to end,
through the tunnel.
"""

from __future__ import annotations

import time

import pytest

from function.webhooks import envelope
from tests.aws.conftest import AppMaker, ConnectProxy, HttpsMoto, LambdaClients, TlsFiles
from tests.aws.helpers import post_push, push_body, stop, tail, wait_for_text
from tests.conftest import FUNCTION_NAME
from tests.kit.deliveries import SECRET


@pytest.fixture(autouse=True)
def trust_moto_certificate(monkeypatch: pytest.MonkeyPatch, tls_files: TlsFiles) -> None:
    monkeypatch.setenv("AWS_CA_BUNDLE", str(tls_files.cert))


def test_invoke_reaches_lambda_through_the_https_proxy_and_fails_without_it(
    https_moto: HttpsMoto,
    connect_proxy: ConnectProxy,
    make_lambda_app: AppMaker,
    lambda_clients: LambdaClients,
) -> None:
    # GIVEN the app whose Lambda client goes through the CONNECT proxy to moto over HTTPS
    https_moto.start_recording()
    app = make_lambda_app(https_proxy=connect_proxy.url, endpoint_url=https_moto.url)
    body = push_body()

    # WHEN a push is delivered
    answer = post_push(app.test_client(), body)

    # THEN it is accepted and moto received the Event invocation
    assert answer.status_code == 202, answer.get_json()
    [invocation] = https_moto.invocations()
    assert (invocation.function_name, invocation.invocation_type) == (FUNCTION_NAME, "Event")
    assert envelope.parse_and_verify(SECRET, invocation.payload).body == body

    # AND the proxy tunnelled it: its access log (written when the tunnel closes) has the CONNECT
    lambda_clients.close()
    connect_line = f"CONNECT 127.0.0.1:{https_moto.port}"
    assert wait_for_text(connect_proxy.log, connect_line), tail(connect_proxy.log)

    # AND with the proxy stopped, the same set-up cannot reach Lambda: GitHub gets 503
    stop(connect_proxy.process)
    https_moto.start_recording()
    app = make_lambda_app(https_proxy=connect_proxy.url, endpoint_url=https_moto.url)
    started = time.perf_counter()
    answer = post_push(app.test_client(), body)
    elapsed = time.perf_counter() - started
    assert answer.status_code == 503
    assert answer.get_json()["error"] == "UNAVAILABLE"
    assert elapsed < 2.0, f"503 took {elapsed:.2f} s"
    assert https_moto.invocations() == []


def test_proxy_down_gives_503_fast(
    https_moto: HttpsMoto, refused_port: int, make_lambda_app: AppMaker
) -> None:
    # GIVEN Lambda (moto) up, but nothing listening where the proxy should be
    https_moto.start_recording()
    app = make_lambda_app(https_proxy=f"http://127.0.0.1:{refused_port}", endpoint_url=https_moto.url)

    # WHEN a push is delivered
    started = time.perf_counter()
    answer = post_push(app.test_client(), push_body())
    elapsed = time.perf_counter() - started

    # THEN GitHub gets 503 UNAVAILABLE at once, and nothing reached Lambda
    assert answer.status_code == 503
    assert answer.get_json()["error"] == "UNAVAILABLE"
    assert elapsed < 2.0, f"503 took {elapsed:.2f} s"
    assert https_moto.invocations() == []
