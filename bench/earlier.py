"""The first sync of an earlier commit, measured in this run on the same rig, corpus and machine.

The speed targets for the first sync compare the parallel path with the sequential path *as it was*
before the render pool, the pipelined reads and the render cuts: comparing with this commit's own
sequential path would credit none of the cuts (they make both faster), and comparing with figures from
another day would compare machines. So the earlier commit's ``function/`` and ``shared/`` are unpacked
from git into a temporary folder and run in a child interpreter (``earlier_child.py``) against this run's
GitHub stand-in and relayed MariaDB, one first sync, timed around the worker's call alone.

A clone without that commit (a shallow one) skips the measurement and says so.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bench.measure import Measured, measuring
from bench.rig import INSTALLATION_ID, USER, Rig

# main on 2026-12-03, the day the speed targets were set: one process, no read-ahead, no render cuts.
EARLIER_COMMIT = "1f02063a7be61458b3758766a783c33a4a1c4d4e"
ROOT = Path(__file__).resolve().parents[1]
_CHILD = Path(__file__).with_name("earlier_child.py")
_TIMEOUT_S = 60


@dataclass(frozen=True)
class Earlier:
    commit: str
    measured: Measured | None  # None: the commit is not in this clone
    reason: str = ""


def available(commit: str = EARLIER_COMMIT) -> bool:
    """Whether this clone has ``commit`` (a shallow clone does not)."""
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True, check=False
    )
    return found.returncode == 0


def first_sync(rig: Rig, repository: str, database: str, commit: str = EARLIER_COMMIT) -> Earlier:
    """Empty ``database``, let the earlier code create its tables and user, and time its first sync of
    ``repository`` (already on the stand-in)."""
    if not available(commit):
        return Earlier(commit, None, f"commit {commit[:7]} is not in this clone (shallow?)")
    rig.empty_database(database)
    with tempfile.TemporaryDirectory(prefix="bench-earlier-") as tree:
        _unpack(commit, Path(tree))
        settings = {
            "direct_url": rig.direct_url(database),
            "relayed_url": rig.relayed_url(database),
            "github_url": rig.github.url,
            "app_id": rig.github.app_id,
            "private_pem": rig.key.private_pem,
            "installation_id": INSTALLATION_ID,
            "user": USER,
            "repository": repository,
            "head": rig.github.head(repo=repository),
            "delivery": f"earlier-{database}",
        }
        env = {**os.environ, "PYTHONPATH": tree, "PYTHONDONTWRITEBYTECODE": "1"}
        # The child's logs go to a file: a pipe nobody reads would fill and stop it.
        with open(Path(tree) / "child.log", "w+") as log:
            child = subprocess.Popen(
                [sys.executable, str(_CHILD)],
                cwd=tree,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
            try:
                measured = _drive(rig, child, settings, log)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    child.kill()
                child.wait()
                for stream in (child.stdin, child.stdout):
                    if stream is not None:
                        stream.close()
    return Earlier(commit, measured)


def _drive(rig: Rig, child: subprocess.Popen[str], settings: dict[str, object], log: IO[str]) -> Measured:
    assert child.stdin is not None
    _send(child.stdin, settings)
    ready = _receive(child, log)
    if not ready.get("ready"):
        raise RuntimeError(f"earlier commit's child did not get ready: {ready}")
    with measuring(rig) as measured:
        _send(child.stdin, {"go": True})
        done = _receive(child, log)
    measured.wall_ms = float(done["wall_ms"])  # the worker's call alone, as ours is timed
    measured.notes = {k: int(done[k]) for k in ("fetched", "written", "processed", "failed")}
    if measured.notes["failed"] or measured.notes["written"] != measured.notes["processed"]:
        raise RuntimeError(f"earlier commit's sync did not write every article: {measured.notes}")
    return measured


def _send(stream: IO[str], message: dict[str, object]) -> None:
    stream.write(json.dumps(message) + "\n")
    stream.flush()


def _receive(child: subprocess.Popen[str], log: IO[str]) -> dict[str, Any]:
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        child.wait(timeout=_TIMEOUT_S)
        log.seek(0)
        raise RuntimeError(f"earlier commit's child ended ({child.returncode}): {log.read()[-3000:]}")
    answer: dict[str, Any] = json.loads(line)
    return answer


def _unpack(commit: str, into: Path) -> None:
    """``function/`` and ``shared/`` of ``commit`` into ``into`` (``git archive``: no work tree touched)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "function", "shared"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
