"""Cold import time of the function from its unpacked deployment zip, with and without the bytecode in it.

``python -m infra.coldstart build/blog-api-<digest>.zip`` unpacks the zip twice (once as built, once with
every ``__pycache__`` removed), then imports the handler and the accept path in a fresh interpreter of the
runtime's version per run, as Lambda's cold start does: ``PYTHONDONTWRITEBYTECODE`` stands in for the
read-only ``/var/task``, so the copy without bytecode compiles on every run. It prints the median and the
range of each; a benchmark figure, not a test of speed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infra.packaging import DEFAULT_PYTHON_VERSION, PackagingError, find_interpreter

# What a webhook's cold start imports before it can answer: the Lambda entry and the accept path.
ACCEPT_PATH_MODULES = ("function.handler", "function.receiver.webhook_route")

_PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
start = time.perf_counter()
for name in sys.argv[2:]:
    __import__(name)
print(time.perf_counter() - start)
"""


@dataclass(frozen=True)
class Timing:
    label: str
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def unpack(zip_path: Path, destination: Path, *, keep_bytecode: bool) -> Path:
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(destination)
    if not keep_bytecode:
        for cache in sorted(destination.rglob("__pycache__"), reverse=True):
            shutil.rmtree(cache)
    return destination


def time_imports(interpreter: str, root: Path, modules: Sequence[str], runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        result = subprocess.run(
            [interpreter, "-I", "-c", _PROBE, str(root), *modules],
            capture_output=True,
            text=True,
            check=False,
            env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
        )
        if result.returncode != 0:
            raise PackagingError(f"importing {', '.join(modules)} failed:\n{result.stderr.strip()}")
        seconds.append(float(result.stdout.strip()))
    return seconds


def measure(
    zip_path: Path,
    *,
    python_version: str = DEFAULT_PYTHON_VERSION,
    modules: Sequence[str] = ACCEPT_PATH_MODULES,
    runs: int = 5,
) -> list[Timing]:
    """Import ``modules`` ``runs`` times from the zip as built and from a copy without bytecode."""
    interpreter = find_interpreter(python_version).path
    with tempfile.TemporaryDirectory(prefix="blog-api-coldstart-") as scratch:
        timings = []
        for label, keep in (("with bytecode", True), ("without bytecode", False)):
            root = unpack(zip_path, Path(scratch) / label.replace(" ", "-"), keep_bytecode=keep)
            timings.append(Timing(label, time_imports(interpreter, root, modules, runs)))
    return timings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.coldstart", description=__doc__.splitlines()[0])
    parser.add_argument("zip", type=Path, help="the deployment zip (make package)")
    parser.add_argument("--python-version", default=DEFAULT_PYTHON_VERSION)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        timings = measure(args.zip, python_version=args.python_version, runs=args.runs)
    except PackagingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for timing in timings:
        print(
            f"{timing.label:>17}: median {timing.median:.2f} s "
            f"(min {min(timing.seconds):.2f}, max {max(timing.seconds):.2f}, {len(timing.seconds)} runs)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
