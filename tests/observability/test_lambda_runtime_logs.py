"""Logging inside the real AWS Lambda Python runtime's own set-up (awslambdaric's bootstrap).

The bootstrap puts its handler on the root logger before the function module is imported. Each test
starts a fresh interpreter that does exactly that (``create_log_sink`` and ``_setup_logging``, as
``bootstrap.run`` does), then imports and calls ``function.handler.handler`` with Function URL events,
and reads everything the process wrote: stdout, stderr and, when the runtime has one, its telemetry pipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.kit.deliveries import SECRET

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghs_" + "Q" * 36
SCRIPT = textwrap.dedent(
    """
    import base64, json, logging, os, sys
    from awslambdaric import bootstrap
    from awslambdaric.lambda_runtime_log_utils import LogFormat

    sink = bootstrap.create_log_sink()
    sink.__enter__()
    bootstrap._setup_logging(
        LogFormat.from_str(os.environ.get("AWS_LAMBDA_LOG_FORMAT")),
        bootstrap._AWS_LAMBDA_LOG_LEVEL,
        sink,
    )
    from function import handler
    from function.webhooks.signature import sign

    def event(body, headers):
        with open(os.environ["EVENT_SHAPE"]) as f:
            e = json.load(f)
        e["body"] = base64.b64encode(body).decode()
        e["isBase64Encoded"] = True
        e["rawPath"] = "/webhooks/github"
        e["rawQueryString"] = ""
        e.pop("cookies", None)
        e["requestContext"]["http"]["method"] = "POST"
        e["requestContext"]["http"]["path"] = "/webhooks/github"
        e["headers"] = {k.lower(): v for k, v in headers.items()}
        return e

    secret = os.environ["GITHUB_WEBHOOK_SECRET"]
    body = b'{"zen": "Keep it logically awesome.", "hook_id": 1}'
    signed = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": "00000000-0000-4000-8000-00000000a001",
              "X-Hub-Signature-256": sign(secret, body), "Content-Type": "application/json"}
    answers = [handler.handler(event(body, signed), None)["statusCode"]]
    unsigned = dict(signed)
    unsigned["X-GitHub-Delivery"] = "00000000-0000-4000-8000-00000000a002"
    unsigned["X-Hub-Signature-256"] = "sha256=" + "0" * 64
    answers.append(handler.handler(event(body, unsigned), None)["statusCode"])

    probe = logging.getLogger("function.probe")
    token = os.environ["PROBE_TOKEN"]
    try:
        raise RuntimeError(f"GitHub refused {token} with secret {secret}")
    except RuntimeError:
        probe.exception("Probe failed", extra={"header": f"Authorization: token {token}"})
    probe.info("Probe url", extra={"url": "mysql://blog:hunter2-pass@db.example:4000/blog"})
    logging.getLogger("urllib3.connectionpool").debug("Probe library debug")
    sink.__exit__(None, None, None)
    print(json.dumps({"answers": answers}), file=sys.__stderr__)
    """
)


def _frames(data: bytes) -> list[str]:
    """Messages of the runtime's framed telemetry protocol (type, length, timestamp, message)."""
    messages, at = [], 0
    while at < len(data):
        length = int.from_bytes(data[at + 4 : at + 8], "big")
        messages.append(data[at + 16 : at + 16 + length].decode())
        at += 16 + length
    return messages


def _run(tmp_path: Path, log_format: str, telemetry: bool) -> tuple[list[str], str, list[int]]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "AWS_LAMBDA_LOG_FORMAT": log_format,
        "AWS_LAMBDA_LOG_LEVEL": "DEBUG" if log_format == "JSON" else "",
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{tmp_path}",
        "LOG_LEVEL": "DEBUG",
        "PROBE_TOKEN": TOKEN,
        "EVENT_SHAPE": str(ROOT / "tests/fixtures/aws/lambdaFunctionUrlEvent.json"),
    }
    pass_fds: tuple[int, ...] = ()
    pipe_file = tmp_path / "telemetry"
    if telemetry:
        fd = os.open(pipe_file, os.O_WRONLY | os.O_CREAT, 0o600)
        env["_LAMBDA_TELEMETRY_LOG_FD"] = str(fd)
        pass_fds = (fd,)
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            timeout=120,
            pass_fds=pass_fds,
            check=False,
        )
    finally:
        if telemetry:
            os.close(fd)
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    *log_err, result = stderr.strip().splitlines()
    written = done.stdout.decode() + "\n".join(log_err)
    lines = [line for line in written.splitlines() if line.strip()]
    if telemetry:
        frames = _frames(pipe_file.read_bytes())
        written += "".join(frames)
        lines += [line for frame in frames for line in frame.splitlines() if line.strip()]
    return lines, written, json.loads(result)["answers"]


@pytest.mark.parametrize("log_format", ["Text", "JSON"])
@pytest.mark.parametrize("telemetry", [False, True], ids=["stdout-sink", "telemetry-pipe"])
def test_each_record_is_written_once_as_our_redacted_json(
    tmp_path: Path, log_format: str, telemetry: bool
) -> None:
    lines, written, answers = _run(tmp_path, log_format, telemetry)

    assert answers == [200, 401]
    records = [json.loads(line) for line in lines]  # every line is one of ours: JSON, nothing else
    messages = [r["message"] for r in records]
    assert messages.count("Received GitHub webhook") == 1  # the signed ping; the unsigned POST is none
    assert messages.count("Webhook processing complete") == 1
    assert messages.count("Rejected unsigned webhook") == 1
    assert messages.count("Probe failed") == 1 and messages.count("Probe url") == 1
    assert "Probe library debug" not in messages  # libraries stay at INFO whatever LOG_LEVEL says
    [failed] = [r for r in records if r["message"] == "Probe failed"]
    assert "RuntimeError" in failed["exception"] and failed["header"] == "Authorization: [redacted]"
    for secret in (SECRET, TOKEN, "hunter2-pass"):
        assert secret not in written
