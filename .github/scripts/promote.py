"""One artifact, promoted: find the zip CI built for a commit, check its digest, check it ran on dev.

The deploy workflow never builds: CI (``.github/workflows/ci.yaml``) builds the zip once per commit, after
the tests pass, and uploads it as the artifact ``lambda-zip-<commit sha>`` holding ``blog-api.zip`` and
``blog-api.zip.sha256``. Every deploy job downloads that artifact and runs ``verify``; a dev deploy writes
``sha256:<digest>`` into its update message; a release runs ``ran-on-dev`` against dev's update history
before prod sees the zip, so prod only ever gets bytes that were deployed to dev.

Subcommands (each reads files the workflow fetched, so the rules are plain functions with tests in
``tests/workflows/test_promote.py``):

* ``find-artifact``: from ``gh api repos/<repo>/actions/artifacts?name=lambda-zip-<sha>``, the newest
  unexpired artifact built for exactly that commit: its id and workflow run id.
* ``verify``: the zip's SHA-256 equals the digest CI recorded beside it.
* ``ran-on-dev``: dev's update history has a succeeded update with that digest. It reads
  ``pulumi stack history --json --stack dev`` page by page (the CLI returns 10 entries unless asked for
  a page), newest first, until the digest is found or a page comes back empty; ``--history-file``
  checks one saved page instead.

Stdlib only: the workflow runs it with the runner's Python before anything is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARTIFACT_PREFIX = "lambda-zip-"
ZIP_NAME = "blog-api.zip"
DIGEST_PREFIX = "sha256:"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
# Entries per ``pulumi stack history`` page (the CLI's default is 10).
HISTORY_PAGE_SIZE = 100
# A bound on the pages read, so a backend that never returns an empty page cannot loop forever.
HISTORY_MAX_PAGES = 1000


class PromotionError(Exception):
    """The artifact cannot be promoted; the message says why and what to do."""


@dataclass(frozen=True)
class Artifact:
    artifact_id: int
    run_id: int
    created_at: str


def artifact_name(sha: str) -> str:
    return f"{ARTIFACT_PREFIX}{sha}"


def find_artifact(listing: dict[str, Any], sha: str) -> Artifact:
    """The newest unexpired ``lambda-zip-<sha>`` artifact whose run built exactly ``sha``."""
    found = [
        Artifact(int(a["id"]), int(a["workflow_run"]["id"]), str(a["created_at"]))
        for a in listing.get("artifacts", [])
        if a.get("name") == artifact_name(sha)
        and not a.get("expired", False)
        and (a.get("workflow_run") or {}).get("head_sha") == sha
    ]
    if not found:
        raise PromotionError(
            f"no CI artifact {artifact_name(sha)}: CI has not passed for {sha} (the zip is uploaded only "
            "after the tests), or the artifact expired. Wait for CI, or re-run it for this commit."
        )
    return max(found, key=lambda a: a.created_at)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(zip_path: Path, recorded: str) -> str:
    """The zip's digest, if it equals the one CI recorded (``sha256sum`` format or the bare hex)."""
    expected = recorded.split()[0].strip() if recorded.strip() else ""
    if not _DIGEST.match(expected):
        raise PromotionError(f"the recorded digest {expected!r} is not a SHA-256")
    actual = sha256_of(zip_path)
    if actual != expected:
        raise PromotionError(f"{zip_path.name} has SHA-256 {actual}, but CI recorded {expected}")
    return actual


def update_message(ref: str, sha: str, digest: str) -> str:
    """The message of a deploy's ``pulumi up``: what ran, and the digest ``ran-on-dev`` looks for."""
    return f"{ref}@{sha} {DIGEST_PREFIX}{digest}"


def ran_on_dev(history: list[dict[str, Any]], digest: str) -> dict[str, Any]:
    """The latest succeeded dev update that deployed ``digest``; refuse when there is none."""
    found = _deployed(history, digest)
    if found is None:
        raise PromotionError(_never_ran(digest))
    return found


def _deployed(history: list[dict[str, Any]], digest: str) -> dict[str, Any] | None:
    marker = f"{DIGEST_PREFIX}{digest}"
    for update in sorted(history, key=lambda u: u.get("startTime") or 0, reverse=True):
        if update.get("kind") == "update" and update.get("result") == "succeeded":
            if marker in str(update.get("message", "")).split():
                return update
    return None


def _never_ran(digest: str) -> str:
    return (
        f"dev never ran {DIGEST_PREFIX}{digest}: a release deploys only what a successful dev update "
        "deployed. Deploy this commit to dev first (a push to main, or Run workflow → dev)."
    )


def history_pages(fetch_page: Callable[[int], list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
    """Pages 1, 2, ... of a stack's history, up to the first empty (or short) page."""
    for page in range(1, HISTORY_MAX_PAGES + 1):
        entries = fetch_page(page)
        if not entries:
            return
        yield entries
        if len(entries) < HISTORY_PAGE_SIZE:
            return
    raise PromotionError(f"the history has more than {HISTORY_MAX_PAGES} pages; stopped reading it")


def ran_on_dev_paged(fetch_page: Callable[[int], list[dict[str, Any]]], digest: str) -> dict[str, Any]:
    """``ran_on_dev`` over the whole history, read page by page until the digest is found."""
    entries_read = 0
    for entries in history_pages(fetch_page):
        entries_read += len(entries)
        found = _deployed(entries, digest)
        if found is not None:
            return found
    raise PromotionError(f"{_never_ran(digest)} ({entries_read} updates of dev's history read, all of it)")


def pulumi_history_page(pulumi: str, stack: str) -> Callable[[int], list[dict[str, Any]]]:
    """Reads one page of ``pulumi stack history --json`` for ``stack``."""

    def fetch(page: int) -> list[dict[str, Any]]:
        command = [pulumi, "stack", "history", "--json", "--stack", stack,
                   "--page-size", str(HISTORY_PAGE_SIZE), "--page", str(page)]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise PromotionError(f"{' '.join(command)} failed: {result.stderr.strip()[-500:]}")
        entries = json.loads(result.stdout or "[]")
        if not isinstance(entries, list):
            raise PromotionError(f"{' '.join(command)} printed no JSON list")
        return entries

    return fetch


def _write_outputs(path: str | None, values: dict[str, str]) -> None:
    lines = "".join(f"{key}={value}\n" for key, value in values.items())
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(lines)
    else:
        sys.stdout.write(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="promote.py", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--output", default=os.environ.get("GITHUB_OUTPUT"), help="step output file (default $GITHUB_OUTPUT)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    find = sub.add_parser("find-artifact", help="the artifact CI built for a commit")
    find.add_argument("--sha", required=True)
    find.add_argument("--artifacts-file", required=True, type=Path, help="gh api .../actions/artifacts JSON")
    check = sub.add_parser("verify", help="the zip matches the digest CI recorded")
    check.add_argument("--zip", required=True, type=Path)
    check.add_argument("--sha256-file", required=True, type=Path)
    dev = sub.add_parser("ran-on-dev", help="a succeeded dev update deployed this digest")
    dev.add_argument("--digest", required=True)
    source = dev.add_mutually_exclusive_group(required=True)
    source.add_argument("--history-file", type=Path, help="one saved page of pulumi stack history --json")
    source.add_argument("--stack", help="read this stack's whole history with the Pulumi CLI, page by page")
    dev.add_argument("--pulumi", default="pulumi", help="the Pulumi CLI to run (with --stack)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "find-artifact":
            artifact = find_artifact(json.loads(args.artifacts_file.read_text()), args.sha)
            _write_outputs(
                args.output, {"artifact-id": str(artifact.artifact_id), "run-id": str(artifact.run_id)}
            )
        elif args.command == "verify":
            digest = verify(args.zip, args.sha256_file.read_text())
            _write_outputs(args.output, {"digest": digest})
        else:
            if args.history_file is not None:
                update = ran_on_dev(json.loads(args.history_file.read_text()), args.digest)
            else:
                update = ran_on_dev_paged(pulumi_history_page(args.pulumi, args.stack), args.digest)
            _write_outputs(args.output, {"dev-update": str(update.get("version", ""))})
    except PromotionError as exc:
        print(f"::error::{exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
