"""``blog-api send-webhook``: what reaches the server is exactly what GitHub would send."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import boto3
import pytest
from moto import mock_aws

from tests.kit.cli import run_cli

SECRET = "send-webhook test secret 0f3a"


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    """A local endpoint that records each request and answers ``status`` / ``answer``."""

    url: str = ""
    status: int = 202
    answer: bytes = b'{"status": "accepted"}'
    requests: list[Received] = field(default_factory=list)

    def signature_ok(self, received: Received, secret: str = SECRET) -> bool:
        expected = "sha256=" + hmac.new(secret.encode(), received.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, received.headers.get("x-hub-signature-256", ""))


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            rec.requests.append(Received({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(rec.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(rec.answer)))
            self.end_headers()
            self.wfile.write(rec.answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    rec.url = f"http://127.0.0.1:{server.server_address[1]}/webhooks/github"
    try:
        yield rec
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_payload_file_is_sent_byte_for_byte_and_signed_over_those_bytes(
    recorder: Recorder, tmp_path: Path
) -> None:
    # GIVEN a payload file whose exact bytes (spacing, key order, trailing newline) matter
    payload = tmp_path / "push.json"
    payload.write_bytes(b'{ "ref" : "refs/heads/main",\n  "zen": "\xc3\xa9" }\n')

    # WHEN it is sent
    result = run_cli(
        "send-webhook", recorder.url, "--secret", SECRET, "--payload", str(payload), "--delivery", "d-42",
        env={"GITHUB_APP_ID": "4242"},
    )  # fmt: skip

    # THEN the server got those bytes, signed over them, with GitHub's headers
    assert result.exit_code == 0, result.stderr
    [got] = recorder.requests
    assert got.body == payload.read_bytes()
    assert recorder.signature_ok(got)
    assert got.headers["x-github-event"] == "push"
    assert got.headers["x-github-delivery"] == "d-42"
    assert got.headers["user-agent"].startswith("GitHub-Hookshot/")
    assert got.headers["content-type"] == "application/json"
    # GitHub's legacy SHA-1 signature, and the App as the hook's target, as on an App's delivery
    sha1 = hmac.new(SECRET.encode(), got.body, hashlib.sha1).hexdigest()
    assert got.headers["x-hub-signature"] == f"sha1={sha1}"
    assert got.headers["x-github-hook-installation-target-type"] == "integration"
    assert got.headers["x-github-hook-installation-target-id"] == "4242"


def test_status_body_and_latency_are_printed(recorder: Recorder) -> None:
    result = run_cli("send-webhook", recorder.url, "--secret", SECRET, "--delivery", "d-1")

    assert result.exit_code == 0
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert lines["status"] == "202"
    assert json.loads(lines["body"]) == {"status": "accepted"}
    assert float(lines["latency_ms"]) >= 0
    assert lines["delivery"] == "d-1"


def test_without_payload_a_realistic_push_is_built_for_repo_ref_and_installation(recorder: Recorder) -> None:
    result = run_cli(
        "send-webhook", recorder.url, "--secret", SECRET,
        "--repo", "alice/blog", "--ref", "refs/heads/trunk", "--installation-id", "77",
    )  # fmt: skip

    assert result.exit_code == 0
    [got] = recorder.requests
    assert recorder.signature_ok(got)
    push = json.loads(got.body)
    assert push["ref"] == "refs/heads/trunk"
    assert push["repository"]["full_name"] == "alice/blog"
    # The repository's default branch is not the pushed ref: a push to another branch can be tried.
    assert push["repository"]["default_branch"] == "main"
    assert push["installation"] == {"id": 77}
    assert len(push["after"]) == 40


def test_delivery_id_defaults_to_a_fresh_uuid(recorder: Recorder) -> None:
    run_cli("send-webhook", recorder.url, "--secret", SECRET)
    run_cli("send-webhook", recorder.url, "--secret", SECRET)

    first, second = (r.headers["x-github-delivery"] for r in recorder.requests)
    assert first != second
    assert len(first) == 36


def test_form_delivery_carries_the_json_in_payload_and_is_signed_over_the_form_bytes(
    recorder: Recorder,
) -> None:
    result = run_cli("send-webhook", recorder.url, "--secret", SECRET, "--form", "--event", "ping")

    assert result.exit_code == 0
    [got] = recorder.requests
    assert got.headers["content-type"] == "application/x-www-form-urlencoded"
    assert got.headers["x-github-event"] == "ping"
    assert recorder.signature_ok(got)
    assert json.loads(parse_qs(got.body.decode())["payload"][0])["hook_id"] == 0


def test_secret_is_read_from_ssm_with_secret_param(recorder: Recorder, aws_env: None) -> None:
    with mock_aws():
        boto3.client("ssm").put_parameter(Name="/d-st/webhook-secret", Value=SECRET, Type="SecureString")

        result = run_cli(
            "send-webhook", recorder.url, "--secret-param", "/d-st/webhook-secret",
            env={"GITHUB_WEBHOOK_SECRET": None},
        )  # fmt: skip

    assert result.exit_code == 0, result.stderr
    assert recorder.signature_ok(recorder.requests[0])


def test_secret_parameter_from_the_environment_is_read_as_the_app_reads_it(
    recorder: Recorder, aws_env: None
) -> None:
    # The CLI reads the app's settings: GITHUB_WEBHOOK_SECRET_PARAM when GITHUB_WEBHOOK_SECRET is unset.
    with mock_aws():
        boto3.client("ssm").put_parameter(Name="/d-st/webhook-secret", Value=SECRET, Type="SecureString")

        result = run_cli(
            "send-webhook", recorder.url,
            env={"GITHUB_WEBHOOK_SECRET": None, "GITHUB_WEBHOOK_SECRET_PARAM": "/d-st/webhook-secret"},
        )  # fmt: skip

    assert result.exit_code == 0, result.stderr
    assert recorder.signature_ok(recorder.requests[0])


def test_missing_ssm_parameter_is_a_one_line_error(recorder: Recorder, aws_env: None) -> None:
    with mock_aws():
        result = run_cli("send-webhook", recorder.url, "--secret-param", "/nope")

    assert result.exit_code == 1
    assert result.stderr.strip() == "error: SSM parameter /nope was not found"
    assert recorder.requests == []


@pytest.mark.parametrize("status", [401, 503])
def test_error_answers_exit_non_zero_after_printing_them(recorder: Recorder, status: int) -> None:
    recorder.status = status
    recorder.answer = b'{"error": "X", "message": "no"}'

    result = run_cli("send-webhook", recorder.url, "--secret", SECRET)

    assert result.exit_code != 0
    assert f"status: {status}" in result.stdout
    assert '"error": "X"' in result.stdout


def test_connection_refused_is_a_one_line_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # the port is closed again: nothing listens there

    result = run_cli("send-webhook", f"http://127.0.0.1:{port}/webhooks/github", "--secret", SECRET)

    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: could not send to http://127.0.0.1:{port}/webhooks/github")
    assert "refused" in line.lower()


def test_no_secret_at_all_is_a_one_line_error(recorder: Recorder) -> None:
    result = run_cli("send-webhook", recorder.url, env={"GITHUB_WEBHOOK_SECRET": None})

    assert result.exit_code == 1
    assert result.stderr.startswith("error: no secret")
    assert recorder.requests == []


def test_default_branch_is_its_own_option(recorder: Recorder) -> None:
    result = run_cli(
        "send-webhook", recorder.url, "--secret", SECRET,
        "--ref", "feature", "--default-branch", "feature",
    )  # fmt: skip

    assert result.exit_code == 0
    push = json.loads(recorder.requests[0].body)
    assert push["ref"] == "refs/heads/feature"
    assert push["repository"]["default_branch"] == "feature"


def test_a_push_to_another_branch_built_by_send_webhook_is_what_the_server_skips() -> None:
    from function.cli.send_webhook import build_push
    from function.webhooks.push import Skip, classify_push

    other = classify_push(build_push("alice/blog", "feature", 1), None)
    tracked = classify_push(build_push("alice/blog", "feature", 1, default_branch="feature"), None)

    assert isinstance(other, Skip) and "feature" in other.reason
    assert not isinstance(tracked, Skip)
