"""Cold start: importing ``function.handler`` in a fresh interpreter, as Lambda does before the first event,
and the cold accept: the same from the unpacked Lambda zip, answering the first push (``cold_accepts``).

Measured with ``python -X importtime``: the sum of the cumulative times of the top-level imports that
``import function.handler`` triggers (everything the interpreter imports at start-up, before our code runs,
is left out by comparing with ``-c pass``). The median of a few runs, after one run that writes the
bytecode caches (a deployed package ships them or writes them once).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.accept import FUNCTION_NAME
from tests.kit.deliveries import SECRET

ROOT = Path(__file__).resolve().parent.parent


def import_ms(module: str = "function.handler", runs: int = 5) -> float:
    """Median milliseconds to import ``module`` cold (bytecode cached)."""
    startup = _top_level_imports("pass")
    _top_level_imports(f"import {module}")  # writes __pycache__ where missing
    totals = []
    for _ in range(runs):
        imports = _top_level_imports(f"import {module}")
        totals.append(sum(us for name, us in imports.items() if name not in startup) / 1000)
    return statistics.median(totals)


def _top_level_imports(code: str) -> dict[str, int]:
    """Module name -> cumulative microseconds, for the imports at the top of -X importtime's tree."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found: dict[str, int] = {}
    for line in result.stderr.splitlines():
        # "import time:       self [us] |  cumulative | imported package"; nesting is indentation.
        if not line.startswith("import time:") or "|" not in line:
            continue
        fields = line[len("import time:") :].split("|")
        name = fields[2]
        if not fields[1].strip().isdigit() or name.startswith("  "):
            continue
        found[name.strip()] = found.get(name.strip(), 0) + int(fields[1])
    return found


# --- the cold accept: from the Lambda zip, in the runtime's Python --------------------------------------

RUNTIME_PYTHON = "python3.12"  # Lambda's runtime for the function (infra/packaging.py builds for it)
_CHILD = Path(__file__).resolve().parent / "cold_child.py"


@dataclass(frozen=True)
class ColdAccept:
    """Medians over ``runs`` fresh interpreters: importing the handler, then answering the first push."""

    bytecode: bool
    runs: int
    import_ms: float
    accept_ms: float
    total_ms: float  # from the interpreter's first line of ours to the 202 (start-up itself excluded)


def cold_accepts(endpoint_url: str, runs: int = 5, zip_dir: Path | None = None) -> list[ColdAccept]:
    """Build (or reuse) the Lambda zip, unpack it twice (as built, and compiled to bytecode in our own
    copy, as a zip shipping ``__pycache__`` would be) and time ``runs`` cold accepts from each: a fresh
    ``python3.12`` imports ``function.handler`` and answers one signed push in Lambda mode, its
    ``LambdaInvoker`` building the boto3 client and calling moto's Lambda API at ``endpoint_url``."""
    from infra.packaging import build_package

    package = build_package(zip_dir or ROOT / "build")
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as scratch:
        event_file = Path(scratch) / "event.json"
        event_file.write_text(json.dumps(_signed_push_event()))
        found = []
        for bytecode in (False, True):
            task = Path(scratch) / ("bytecode" if bytecode else "source")
            with zipfile.ZipFile(package.path) as archive:
                archive.extractall(task)
            if bytecode:
                subprocess.run(
                    [_real_interpreter(), "-m", "compileall", "-q", "-j", "0", str(task)],
                    check=True,
                    timeout=300,
                )
            found.append(_cold_runs(task, event_file, endpoint_url, runs, bytecode))
        return found


def _cold_runs(task: Path, event_file: Path, endpoint_url: str, runs: int, bytecode: bool) -> ColdAccept:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "AWS_LAMBDA_FUNCTION_NAME": FUNCTION_NAME,
        "AWS_ENDPOINT_URL_LAMBDA": endpoint_url,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_SESSION_TOKEN": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "GITHUB_WEBHOOK_SECRET": SECRET,
        # The accept path reads no article; a folder source that exists passes the start-up checks
        # without GitHub App credentials (which ARTICLE_SOURCE=github requires).
        "ARTICLE_SOURCE": f"dir:{task}",
        "NO_PROXY": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        # Without bytecode, nothing may be written either: Lambda's /var/task is read-only.
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    python = _real_interpreter()
    samples = []
    for _ in range(runs):
        result = subprocess.run(
            [python, "-s", str(_CHILD), str(task), str(event_file)],
            cwd=task,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if result.returncode != 0:
            raise RuntimeError(f"cold accept failed ({result.returncode}): {result.stderr[-1500:]}")
        sample = json.loads(result.stdout.strip().splitlines()[-1])
        if sample["status"] != 202:
            raise RuntimeError(f"cold accept answered {sample['status']}: {result.stdout[-500:]}")
        samples.append(sample)
    return ColdAccept(
        bytecode=bytecode,
        runs=runs,
        import_ms=statistics.median(s["import_ms"] for s in samples),
        accept_ms=statistics.median(s["accept_ms"] for s in samples),
        total_ms=statistics.median(s["total_ms"] for s in samples),
    )


def _real_interpreter() -> str:
    """The runtime Python's own executable: ``$BENCH_RUNTIME_PYTHON``, ``python3.12`` on PATH, or pyenv's
    (whose shim on PATH answers only where a local version file allows it)."""
    candidates = [os.environ.get("BENCH_RUNTIME_PYTHON"), RUNTIME_PYTHON]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/3.12*/bin/{RUNTIME_PYTHON}"))
    for candidate in filter(None, candidates):
        try:
            found = subprocess.run(
                [candidate, "-c", "import sys; print(sys.executable)"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except OSError:
            continue
        if found.returncode == 0:
            return found.stdout.strip()
    raise RuntimeError(f"no {RUNTIME_PYTHON} found: set BENCH_RUNTIME_PYTHON to the runtime's interpreter")


def _signed_push_event() -> dict[str, Any]:
    """An API Gateway (HTTP API) event carrying a signed one-commit push."""
    from tests.kit.deliveries import github_headers, push_payload

    body = json.dumps(push_payload(repo="octo/blog")).encode()
    headers = {k.lower(): v for k, v in github_headers(body, delivery="cold-1").items()}
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/webhooks/github",
        "rawQueryString": "",
        "headers": {**headers, "host": "example.execute-api.us-east-1.amazonaws.com"},
        "requestContext": {
            "http": {
                "method": "POST",
                "path": "/webhooks/github",
                "protocol": "HTTP/1.1",
                "sourceIp": "192.0.2.1",
                "userAgent": headers["user-agent"],
            },
            "stage": "$default",
        },
        "body": body.decode(),
        "isBase64Encoded": False,
    }
