"""Fixtures for the self-invoke tests: fake AWS credentials, apps with a real LambdaInvoker, moto in
process and over a socket, the Lambda API stand-in, and moto over HTTPS behind a CONNECT proxy."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import socket
import ssl
import sys
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from function.app import create_app
from function.aws.invoker import LambdaInvoker, lambda_client_factory
from function.settings import Settings
from tests.aws.helpers import (
    RecordedInvocation,
    create_function,
    free_port,
    invocations_in,
    start,
    stop,
    wait_for_port,
)
from tests.aws.lambda_stand_in import LambdaApiStandIn
from tests.conftest import FUNCTION_NAME

REGION = "us-east-1"
BIN = Path(sys.executable).parent

# Anything on the machine that could send boto3 elsewhere than where a test points it.
_LEAKY_ENV = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_LAMBDA",
    "AWS_CA_BUNDLE",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
)


@pytest.fixture(autouse=True)
def aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials and a region; no profile, endpoint, CA bundle or proxy from the machine."""
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


class LambdaClients:
    """Client factories for LambdaInvoker, each on ``lambda_client_factory(**kw)``; remembers every
    client it built so the test (or the fixture's end) can close them."""

    def __init__(self) -> None:
        self.made: list[Any] = []

    def factory(self, **kwargs: Any) -> Callable[[], Any]:
        def build() -> Any:
            client = lambda_client_factory(**kwargs)
            self.made.append(client)
            return client

        return build

    def close(self) -> None:
        while self.made:
            self.made.pop().close()


@pytest.fixture
def lambda_clients() -> Iterator[LambdaClients]:
    clients = LambdaClients()
    try:
        yield clients
    finally:
        clients.close()


AppMaker = Callable[..., Flask]


@pytest.fixture
def make_lambda_app(make_settings: Callable[..., Settings], lambda_clients: LambdaClients) -> AppMaker:
    """``make_lambda_app(endpoint_url=..., https_proxy=...)`` → the app in Lambda mode with a real
    LambdaInvoker for ``d-st-blog-api`` on a boto3 client from ``lambda_client_factory``."""

    def make(**client_kwargs: Any) -> Flask:
        invoker = LambdaInvoker(FUNCTION_NAME, lambda_clients.factory(**client_kwargs))
        return create_app(make_settings(), invoker=invoker)

    return make


@pytest.fixture
def moto_recording(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Callable[[], list[RecordedInvocation]]]:
    """moto's own request recorder, on for the test: the callable returns the Invoke requests moto served.

    moto writes the recording to ``moto_recording`` in the working directory (its path is read once,
    when moto is imported), so the test runs in its tmp_path.
    """
    from moto.moto_api import recorder

    monkeypatch.chdir(tmp_path)
    recorder.reset_recording()
    recorder.start_recording()
    try:
        yield lambda: invocations_in(recorder.download_recording())
    finally:
        recorder.stop_recording()
        recorder.reset_recording()


@pytest.fixture
def moto_server() -> Iterator[str]:
    """moto in a thread on a real loopback socket, Docker off, with ``d-st-blog-api`` created; its URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        _moto_config(url)
        create_function(FUNCTION_NAME, endpoint_url=url)
        yield url
        # moto's backends live in this process: forget the function for the next test.
        _moto_api(url, "reset", {})
    finally:
        server.stop()


def _moto_config(url: str, context: ssl.SSLContext | None = None) -> None:
    """Turn moto's Docker-backed Lambda off: without Docker it would answer with a FunctionError."""
    _moto_api(url, "config", {"lambda": {"use_docker": False}}, context)


def _moto_api(url: str, action: str, body: Any = None, context: ssl.SSLContext | None = None) -> str:
    """POST (or, without ``body``, GET) ``/moto-api/<action>``; returns the answer's text."""
    # url is a loopback http(s) URL this module built, never user input
    request = urllib.request.Request(  # noqa: S310
        f"{url}/moto-api/{action}",
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"},
        method="POST" if body is not None else "GET",
    )
    with urllib.request.urlopen(request, timeout=5, context=context) as answer:  # noqa: S310
        assert answer.status in (200, 201), answer.status
        return str(answer.read().decode())


@pytest.fixture
def make_stand_in() -> Iterator[Callable[..., LambdaApiStandIn]]:
    """``make_stand_in(throttle=..., max_payload=..., hang=...)`` → a started Lambda API stand-in."""
    started: list[LambdaApiStandIn] = []

    def make(**behaviour: Any) -> LambdaApiStandIn:
        stand_in = LambdaApiStandIn(**behaviour).start()
        started.append(stand_in)
        return stand_in

    yield make
    for stand_in in started:
        stand_in.close()


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port where a connection is refused: bound (so nobody else takes it) but not listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A self-signed certificate for 127.0.0.1: moto serves it, and the client trusts it through
    AWS_CA_BUNDLE — real TLS verification, no ``verify=False`` needed."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    files = TlsFiles(cert=folder / "cert.pem", key=folder / "key.pem")
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return files


@dataclass(frozen=True)
class HttpsMoto:
    """moto_server over HTTPS in a subprocess; its request recorder is reachable over its API."""

    url: str
    port: int
    tls: ssl.SSLContext

    def start_recording(self) -> None:
        _moto_api(self.url, "recorder/reset-recording", {}, self.tls)
        _moto_api(self.url, "recorder/start-recording", {}, self.tls)

    def invocations(self) -> list[RecordedInvocation]:
        return invocations_in(_moto_api(self.url, "recorder/download-recording", None, self.tls))


@pytest.fixture(scope="module")
def https_moto(tls_files: TlsFiles, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpsMoto]:
    """``moto_server`` with our certificate as a subprocess on a free loopback port, Docker off, with
    ``d-st-blog-api`` created."""
    from botocore.config import Config

    folder = tmp_path_factory.mktemp("moto-https")
    port = free_port()
    log = folder / "moto_server.log"
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY_ENV}
    env["MOTO_RECORDER_FILEPATH"] = str(folder / "recording")
    argv = [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)]
    proc = start([*argv, "--ssl-cert", str(tls_files.cert), "--ssl-key", str(tls_files.key)], log, env)
    try:
        wait_for_port(port, proc, log)
        moto = HttpsMoto(
            url=f"https://127.0.0.1:{port}",
            port=port,
            tls=ssl.create_default_context(cafile=str(tls_files.cert)),
        )
        _moto_config(moto.url, moto.tls)
        create_function(
            FUNCTION_NAME,
            endpoint_url=moto.url,
            verify=str(tls_files.cert),
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(proxies={}),  # straight to moto, whatever the environment says
        )
        yield moto
    finally:
        stop(proc)


@dataclass(frozen=True)
class ConnectProxy:
    url: str
    log: Path
    process: Any  # subprocess.Popen[bytes]


@pytest.fixture
def connect_proxy(tmp_path: Path) -> Iterator[ConnectProxy]:
    """proxy.py as a subprocess on a free loopback port: a real HTTPS CONNECT proxy with an access log."""
    port = free_port()
    log = tmp_path / "proxy.log"
    data = tmp_path / "proxy-data"
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY_ENV}
    proc = start(
        [
            str(BIN / "proxy"),
            "--hostname",
            "127.0.0.1",
            "--port",
            str(port),
            "--num-workers",
            "1",
            "--num-acceptors",
            "1",
            "--data-dir",
            str(data),
            "--ca-cert-dir",
            str(data / "certificates"),
            "--cache-dir",
            str(data / "cache"),
        ],
        log,
        env,
    )
    try:
        wait_for_port(port, proc, log)
        yield ConnectProxy(url=f"http://127.0.0.1:{port}", log=log, process=proc)
    finally:
        stop(proc)
