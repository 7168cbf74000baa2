"""Helpers for the AWS tests: deliveries of a chosen size, moto's request recording, subprocesses."""

from __future__ import annotations

import base64
import io
import json
import socket
import subprocess
import time
import zipfile
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

from tests.kit.deliveries import github_headers, push_payload

WEBHOOK_URL = "/webhooks/github"


def post_push(client: FlaskClient, body: bytes) -> Any:
    """POST ``body`` to the webhook route as GitHub would deliver a push."""
    return client.post(WEBHOOK_URL, data=body, headers=github_headers(body))


def push_body(size: int | None = None) -> bytes:
    """A push to the tracked branch; with ``size``, padded (in the head commit's message) to exactly that."""
    data = push_payload()
    body = json.dumps(data).encode()
    if size is None:
        return body
    filler = size - len(body)
    assert filler >= 0, f"a push is at least {len(body)} bytes"
    data["head_commit"] = {**(data.get("head_commit") or {}), "message": ""}
    base = len(json.dumps(data).encode())
    data["head_commit"]["message"] = "x" * (size - base)
    body = json.dumps(data).encode()
    assert len(body) == size
    return body


def create_function(name: str, **client_kwargs: Any) -> str:
    """Create ``name`` in moto (a role first: moto checks it exists); returns the function's ARN.

    ``client_kwargs`` go to ``boto3.client`` (endpoint_url, verify, ...); the clients are closed after.
    """
    import boto3

    with closing(boto3.client("iam", **client_kwargs)) as iam_client:
        role = _create_role(iam_client, name)
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("function/handler.py", "def handler(event, context):\n    return None\n")
    with closing(boto3.client("lambda", **client_kwargs)) as lambda_client:
        answer = lambda_client.create_function(
            FunctionName=name,
            Runtime="python3.11",
            Role=role,
            Handler="function.handler.handler",
            Code={"ZipFile": code.getvalue()},
        )
    return str(answer["FunctionArn"])


def _create_role(iam_client: Any, name: str) -> str:
    role = iam_client.create_role(
        RoleName=f"{name}-role",
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
    return str(role["Role"]["Arn"])


@dataclass(frozen=True)
class RecordedInvocation:
    """An Invoke request as moto's recorder saw it."""

    function_name: str
    invocation_type: str | None
    payload: bytes


def invocations_in(recording: str) -> list[RecordedInvocation]:
    """The Lambda Invoke requests in a moto recording (one JSON object per request, in order)."""
    found = []
    for line in recording.splitlines():
        entry = json.loads(line)
        path = entry["url"].split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
        parts = path.split("/")
        if entry["method"] != "POST" or len(parts) != 4 or parts[-1] != "invocations":
            continue
        headers = {k.lower(): v for k, v in entry["headers"].items()}
        body = entry.get("body") or ""
        payload = base64.b64decode(body) if entry.get("body_encoded") else body.encode()
        found.append(RecordedInvocation(parts[2], headers.get("x-amz-invocation-type"), payload))
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 20.0) -> None:
    """Wait until ``port`` on 127.0.0.1 accepts connections; fail with the log's tail if it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}: {tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{proc.args!r} did not listen on {port} within {timeout:.0f} s: {tail(log)}")


def wait_for_text(log: Path, text: str, timeout: float = 5.0) -> bool:
    """True as soon as ``text`` appears in ``log``; False after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return True
        time.sleep(0.05)
    return False


def tail(log: Path, lines: int = 5) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate ``proc`` and wait for it (kill if it lingers)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def start(argv: Sequence[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` with stdout and stderr going to ``log``."""
    with open(log, "wb") as out:
        return subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, env=env)
