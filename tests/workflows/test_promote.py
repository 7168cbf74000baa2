"""One artifact promoted (``.github/scripts/promote.py``): the commit's CI zip, its digest, dev ran it."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.workflows import PROMOTE_SCRIPT, load_promote

promote = load_promote()
SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def artifact(
    artifact_id: int, run_id: int, sha: str, created: str, *, expired: bool = False
) -> dict[str, Any]:
    return {
        "id": artifact_id,
        "name": f"lambda-zip-{sha}",
        "expired": expired,
        "created_at": created,
        "workflow_run": {"id": run_id, "head_sha": sha},
    }


def test_finds_the_newest_unexpired_artifact_of_exactly_that_commit() -> None:
    listing = {
        "artifacts": [
            artifact(1, 10, SHA, "2026-12-01T10:00:00Z"),
            artifact(2, 20, SHA, "2026-12-02T10:00:00Z"),
            artifact(3, 30, SHA, "2026-12-03T10:00:00Z", expired=True),
            artifact(4, 40, OTHER, "2026-12-04T10:00:00Z"),
        ]
    }
    found = promote.find_artifact(listing, SHA)
    assert (found.artifact_id, found.run_id) == (2, 20)


def test_no_artifact_means_ci_has_not_passed_and_nothing_deploys() -> None:
    listing = {"artifacts": [artifact(4, 40, OTHER, "2026-12-04T10:00:00Z")]}
    # A name that matches but a run of another commit (a re-tagged name) does not count either.
    listing["artifacts"][0]["name"] = f"lambda-zip-{SHA}"
    with pytest.raises(promote.PromotionError, match="CI has not passed"):
        promote.find_artifact(listing, SHA)


def test_verify_accepts_the_recorded_digest_and_refuses_any_other(tmp_path: Path) -> None:
    zip_path = tmp_path / "blog-api.zip"
    zip_path.write_bytes(b"PK zip bytes")
    digest = hashlib.sha256(b"PK zip bytes").hexdigest()
    assert promote.verify(zip_path, f"{digest}  blog-api.zip\n") == digest
    with pytest.raises(promote.PromotionError, match="CI recorded"):
        promote.verify(zip_path, f"{'0' * 64}  blog-api.zip\n")
    with pytest.raises(promote.PromotionError, match="not a SHA-256"):
        promote.verify(zip_path, "")


def history_entry(
    version: int, result: str, message: str, start: int, kind: str = "update"
) -> dict[str, Any]:
    return {"version": version, "kind": kind, "result": result, "message": message, "startTime": start}


def test_a_release_needs_a_succeeded_dev_update_with_that_digest() -> None:
    digest = "a" * 64
    message = promote.update_message("main", SHA, digest)
    assert message == f"main@{SHA} sha256:{digest}"
    history = [
        history_entry(7, "failed", message, 100),
        history_entry(8, "succeeded", message, 200),
        history_entry(9, "succeeded", promote.update_message("main", OTHER, "b" * 64), 300),
    ]
    assert promote.ran_on_dev(history, digest)["version"] == 8


@pytest.mark.parametrize(
    "history",
    [
        [],
        [history_entry(7, "failed", f"main@{SHA} sha256:{'a' * 64}", 100)],
        [history_entry(7, "succeeded", f"main@{SHA} sha256:{'a' * 64}", 100, kind="preview")],
        # A prefix of the digest is not the digest.
        [history_entry(7, "succeeded", f"main@{SHA} sha256:{'a' * 63}", 100)],
    ],
)
def test_no_matching_dev_update_refuses_the_release(history: list[dict[str, Any]]) -> None:
    with pytest.raises(promote.PromotionError, match="dev never ran"):
        promote.ran_on_dev(history, "a" * 64)


def test_command_line_writes_step_outputs_and_fails_with_an_annotation(tmp_path: Path) -> None:
    listing = tmp_path / "artifacts.json"
    listing.write_text(json.dumps({"artifacts": [artifact(2, 20, SHA, "2026-12-02T10:00:00Z")]}))
    output = tmp_path / "out"
    ok = subprocess.run(
        [sys.executable, str(PROMOTE_SCRIPT), "--output", str(output), "find-artifact", "--sha", SHA,
         "--artifacts-file", str(listing)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert output.read_text() == "artifact-id=2\nrun-id=20\n"
    refused = subprocess.run(
        [sys.executable, str(PROMOTE_SCRIPT), "--output", str(output), "find-artifact", "--sha", OTHER,
         "--artifacts-file", str(listing)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert refused.returncode == 1 and refused.stderr.startswith("::error::no CI artifact")


def test_history_is_read_page_by_page_until_the_digest_is_found() -> None:
    digest = "a" * 64
    # Ten pages of other updates (more than the CLI's default page of 10), then the one that ran.
    size = promote.HISTORY_PAGE_SIZE
    pages = [
        [history_entry(i, "succeeded", f"main@{OTHER} sha256:{'b' * 64}", 10_000 - i) for i in range(size)]
        for _ in range(10)
    ]
    pages.append([history_entry(4, "succeeded", promote.update_message("main", SHA, digest), 4)])
    pages.append([history_entry(3, "succeeded", promote.update_message("main", SHA, "c" * 64), 3)])
    asked: list[int] = []

    def fetch(page: int) -> list[dict[str, Any]]:
        asked.append(page)
        return pages[page - 1] if page <= len(pages) else []

    assert promote.ran_on_dev_paged(fetch, digest)["version"] == 4
    assert asked == list(range(1, 12))  # it stopped at the page that held the digest


def test_the_whole_history_is_read_before_a_release_is_refused() -> None:
    size = promote.HISTORY_PAGE_SIZE
    full = [history_entry(i, "succeeded", "main@x sha256:" + "b" * 64, i) for i in range(size)]
    asked: list[int] = []

    def fetch(page: int) -> list[dict[str, Any]]:
        asked.append(page)
        return full if page <= 3 else []

    with pytest.raises(promote.PromotionError, match=f"{3 * size} updates of dev's history read"):
        promote.ran_on_dev_paged(fetch, "a" * 64)
    assert asked == [1, 2, 3, 4]


def test_ran_on_dev_pages_through_the_pulumi_cli(tmp_path: Path) -> None:
    # A stand-in `pulumi` that answers `stack history --json --page-size N --page P` from files.
    digest = "d" * 64
    size = promote.HISTORY_PAGE_SIZE
    for page in (1, 2):
        entries = [
            history_entry(page * 1000 + i, "succeeded", "main@x sha256:" + "e" * 64, 0) for i in range(size)
        ]
        (tmp_path / f"page-{page}.json").write_text(json.dumps(entries))
    found = [history_entry(77, "succeeded", promote.update_message("v1", SHA, digest), 0)]
    (tmp_path / "page-3.json").write_text(json.dumps(found))
    log = tmp_path / "calls.log"
    fake = tmp_path / "pulumi"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys, pathlib\n"
        f"pathlib.Path({str(log)!r}).open('a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "args = sys.argv[1:]\n"
        "page = args[args.index('--page') + 1]\n"
        f"path = pathlib.Path({str(tmp_path)!r}) / f'page-{{page}}.json'\n"
        "print(path.read_text() if path.exists() else '[]')\n"
    )
    fake.chmod(0o755)
    output = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, str(PROMOTE_SCRIPT), "--output", str(output), "ran-on-dev", "--digest", digest,
         "--stack", "dev", "--pulumi", str(fake)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert output.read_text() == "dev-update=77\n"
    calls = log.read_text().splitlines()
    assert calls == [
        f"stack history --json --stack dev --page-size {size} --page {page}" for page in (1, 2, 3)
    ]
