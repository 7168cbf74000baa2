"""The development server (``flask run``, what ``make run`` starts) logs plain JSON lines: Werkzeug's
start-up line and request lines carry no terminal colour codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_dev_servers_lines_are_json_without_escape_sequences(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GITHUB_WEBHOOK_SECRET": "dev-secret",
        "ARTICLE_SOURCE": f"dir:{ROOT / 'examples' / 'articles'}",
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("AWS_LAMBDA_FUNCTION_NAME", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "function.app", "run", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines: list[str] = []
        url = None
        deadline = time.monotonic() + 60
        assert server.stderr is not None
        while url is None and time.monotonic() < deadline:
            line = server.stderr.readline()
            assert line, f"the server ended: {lines}"
            lines.append(line)
            message = json.loads(line)["message"]
            if "Running on http://" in message:
                url = message.split("Running on ", 1)[1].split()[0]
        assert url is not None, lines
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as answer:  # noqa: S310 - loopback
            assert answer.status == 200
        while "/healthz" not in lines[-1] and time.monotonic() < deadline:
            lines.append(server.stderr.readline())  # up to the request's line
    finally:
        server.terminate()
        server.wait(timeout=10)
    for line in lines:
        assert "\x1b" not in line, line
        json.loads(line)
    messages = [json.loads(line)["message"] for line in lines]
    assert any(m.startswith("Press CTRL+C to quit") for m in messages)
    assert any('"GET /healthz HTTP/1.1" 200' in m for m in messages), messages
