"""The accept path's cold start: a signed push answered 202 in Lambda mode, by a fresh interpreter, loads
none of the worker's stack (database drivers, YAML, Markdown, the JWT and GitHub HTTP clients)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.aws.lambda_stand_in import LambdaApiStandIn
from tests.kit.deliveries import SECRET, as_http_event, github_headers, push_payload

ROOT = Path(__file__).resolve().parents[2]
WORKER_STACK = ("peewee", "pymysql", "yaml", "markdown_it", "mdit_py_plugins", "jwt", "cryptography")
# Ours: everything of the worker side. (urllib3 itself is loaded by botocore for the self-invoke; our GitHub
# client on top of it is not.) Of the store, only standard-library modules: the database URL's parser, which
# settings use at start-up, and the plain records (the /events route names the sweep's watermark).
WORKER_MODULES = ("function.github", "function.sources", "function.articles", "function.worker.sync")
# The store's plain record types (standard library only) come with the read routes' JSON shapes.
STORE_AT_START_UP = {
    "function.store",
    "function.store.url",
    "function.store.records",
    "function.store.book_records",
}

# Run in a fresh interpreter: what this test process imported says nothing about a cold start.
_PROBE = """
import json, sys
from function.handler import handler
event = json.loads(sys.stdin.read())
answer = handler(event, None)
print(json.dumps({"status": answer["statusCode"], "body": answer["body"], "modules": sorted(sys.modules)}))
"""


def _http_api_event(body: bytes) -> dict[str, Any]:
    return as_http_event("apiGatewayProxyV2Event", "POST", "/webhooks/github", body, github_headers(body))


def test_signed_push_accepted_in_lambda_mode_loads_none_of_the_worker_stack(
    make_stand_in: Callable[..., LambdaApiStandIn],
) -> None:
    # GIVEN a function in Lambda mode whose self-invoke reaches a local Lambda API
    stand_in = make_stand_in()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GITHUB_", "DATABASE_"))},
        "AWS_LAMBDA_FUNCTION_NAME": "d-st-blog-api",
        "AWS_DEFAULT_REGION": "ap-northeast-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ENDPOINT_URL_LAMBDA": stand_in.url,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        # The start-up checks want the App's settings, as the deployed function has them; only their
        # shape is checked at start-up, and the accept path never uses them.
        "GITHUB_APP_ID": "123456",
        "GITHUB_APP_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n",
        "PYTHONPATH": str(ROOT),
    }
    body = json.dumps(push_payload()).encode()

    # WHEN a fresh interpreter answers one signed push through the Lambda entry
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        input=json.dumps(_http_api_event(body)),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )

    # THEN the push was queued (one invoke) and answered 202
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == 202, answer["body"]
    assert len(stand_in.calls) == 1
    # AND none of the worker's stack was imported on the way
    loaded = set(answer["modules"])
    assert [m for m in WORKER_STACK if m in loaded] == []
    assert [m for m in loaded if m.startswith(WORKER_MODULES)] == []
    assert {m for m in loaded if m.startswith("function.store")} <= STORE_AT_START_UP
