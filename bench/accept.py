"""The accept path, measured: a signed push delivery to the real app in Lambda mode, whose real
``LambdaInvoker`` sends ``InvocationType=Event`` to moto's Lambda API on loopback (docker off).

The delivery is the push GitHub sends for a repository of N articles (every path listed under the commit's
``added``), so a cost growing with N would show. Nothing here touches GitHub or the database: the accept
path must not. Timed per call in-process through Flask's test client (WSGI), after warm-up calls.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import statistics
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench import corpus

FUNCTION_NAME = "d-st-blog-api"
_WARM_UP_CALLS = 10
_FAKE_AWS_ENV = {
    # moto accepts any credentials; these keep boto3 from looking for real ones.
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_SESSION_TOKEN": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@dataclass
class AcceptTimes:
    calls: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    body_bytes: int


@contextlib.contextmanager
def lambda_api() -> Iterator[str]:
    """moto's Lambda API on 127.0.0.1 with docker off and our function created; yields its URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        _post_json(f"{url}/moto-api/config", {"lambda": {"use_docker": False}})
        _create_function(url)
        yield url
    finally:
        server.stop()


def measure_accept(sizes: tuple[int, ...], calls: int, endpoint_url: str) -> dict[int, AcceptTimes]:
    """p50 / p99 over ``calls`` warm deliveries of an N-article push, for each N. The sizes take turns
    call by call, so whatever else the machine does falls on all of them alike."""
    from function.app import create_app
    from function.aws.invoker import LambdaInvoker, lambda_client_factory
    from function.settings import Settings
    from tests.kit.deliveries import SECRET, github_headers, push_payload

    settings = Settings(webhook_secret=SECRET, lambda_function_name=FUNCTION_NAME, log_level="WARNING")
    invoker = LambdaInvoker(FUNCTION_NAME, lambda: lambda_client_factory(None, endpoint_url))
    client = create_app(settings, invoker=invoker).test_client()
    bodies = {n: _push_body(n, push_payload(repo="octo/blog")) for n in sizes}

    times: dict[int, list[float]] = {n: [] for n in sizes}
    for i in range(_WARM_UP_CALLS + calls):
        for n, body in bodies.items():
            headers = github_headers(body, delivery=f"accept-{n}-{i}")
            started = time.perf_counter()
            answer = client.post("/webhooks/github", data=body, headers=headers)
            elapsed = (time.perf_counter() - started) * 1000
            if answer.status_code != 202:
                raise RuntimeError(f"accept path answered {answer.status_code}: {answer.get_json()}")
            if i >= _WARM_UP_CALLS:
                times[n].append(elapsed)
    return {n: _summary(sorted(times[n]), len(bodies[n])) for n in sizes}


def _push_body(n: int, payload: dict[str, Any]) -> bytes:
    """The push GitHub sends when N articles arrive in one commit."""
    payload["commits"][0]["added"] = [corpus.path(i) for i in range(n)]
    payload["head_commit"] = payload["commits"][0]
    return json.dumps(payload).encode()


def _summary(sorted_ms: list[float], body_bytes: int) -> AcceptTimes:
    return AcceptTimes(
        calls=len(sorted_ms),
        p50_ms=statistics.median(sorted_ms),
        p99_ms=_percentile(sorted_ms, 0.99),
        max_ms=sorted_ms[-1],
        body_bytes=body_bytes,
    )


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """The app's logs (and moto's request lines) go nowhere while measuring; logging is restored after,
    since ``create_app`` configures the root logger for the whole process."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


@contextlib.contextmanager
def fake_aws_environment() -> Iterator[None]:
    """Credentials and region for moto, and loopback kept off any proxy; restored afterwards."""
    saved = {k: os.environ.get(k) for k in [*_FAKE_AWS_ENV, "NO_PROXY", "no_proxy"]}
    os.environ.update(_FAKE_AWS_ENV)
    for name in ("NO_PROXY", "no_proxy"):
        os.environ[name] = ",".join(filter(None, [saved[name], "127.0.0.1", "localhost"]))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (p99 of 200 calls is the 198th fastest)."""
    rank = max(1, min(len(sorted_values), round(q * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


def _create_function(url: str) -> None:
    import boto3

    iam = boto3.client("iam", endpoint_url=url)
    role = iam.create_role(
        RoleName="bench-blog-api",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("function/handler.py", "def handler(event, context):\n    return None\n")
    boto3.client("lambda", endpoint_url=url).create_function(
        FunctionName=FUNCTION_NAME,
        Runtime="python3.11",
        Role=role["Role"]["Arn"],
        Handler="function.handler.handler",
        Code={"ZipFile": archive.getvalue()},
    )


def _post_json(url: str, data: Any) -> None:
    import urllib.request

    request = urllib.request.Request(  # noqa: S310 - a loopback URL we just started
        url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        answer.read()
