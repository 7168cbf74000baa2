"""The dev hold / skip / release rule and the review stack names (``.github/scripts/dev_hold.py``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workflows import DEV_HOLD_SCRIPT, load_dev_hold

dev_hold = load_dev_hold()
Event = dev_hold.Event
HoldChange = dev_hold.HoldChange
Request = dev_hold.Request


def push_to_main() -> object:
    return Request(event=Event.PUSH, branch="main")


def manual(branch: str, *, release: bool = False, release_only: bool = False) -> object:
    return Request(event=Event.DISPATCH, branch=branch, release=release, release_only=release_only)


# --- the rule ---


def test_main_push_with_dev_free_deploys_and_leaves_dev_free() -> None:
    decision = dev_hold.decide(push_to_main(), None)

    assert decision.deploy is True
    assert decision.hold is HoldChange.KEEP
    assert decision.held_by_after is None


def test_main_push_with_dev_held_skips_with_a_notice_naming_the_branch() -> None:
    decision = dev_hold.decide(push_to_main(), "feature/async-path")

    assert decision.deploy is False
    assert decision.hold is HoldChange.KEEP
    assert decision.held_by_after == "feature/async-path"
    assert "`feature/async-path`" in decision.notice
    assert "not** deployed" in decision.notice
    # The notice tells the reader how to free dev.
    assert "release-dev" in decision.notice
    assert "release: true" in decision.notice


def test_manual_branch_deploy_with_dev_free_deploys_and_holds_dev() -> None:
    decision = dev_hold.decide(manual("feature/x"), None)

    assert decision.deploy is True
    assert decision.hold is HoldChange.SET
    assert decision.held_by_after == "feature/x"


def test_manual_branch_deploy_again_while_holding_keeps_holding() -> None:
    decision = dev_hold.decide(manual("feature/x"), "feature/x")

    assert decision.deploy is True
    assert decision.hold is HoldChange.SET
    assert decision.held_by_after == "feature/x"


def test_manual_release_frees_dev_without_deploying() -> None:
    decision = dev_hold.decide(manual("feature/x", release_only=True), "feature/x")

    assert decision.deploy is False
    assert decision.hold is HoldChange.CLEAR
    assert decision.held_by_after is None


def test_manual_release_from_any_branch_frees_dev() -> None:
    decision = dev_hold.decide(manual("main", release_only=True), "feature/x")

    assert decision.hold is HoldChange.CLEAR
    assert decision.deploy is False


def test_manual_release_of_free_dev_changes_nothing() -> None:
    decision = dev_hold.decide(manual("feature/x", release_only=True), None)

    assert decision.deploy is False
    assert decision.hold is HoldChange.KEEP


def test_branch_deploy_with_release_true_deploys_and_frees_dev() -> None:
    decision = dev_hold.decide(manual("feature/x", release=True), "feature/x")

    assert decision.deploy is True
    assert decision.hold is HoldChange.CLEAR
    assert decision.held_by_after is None


def test_branch_deploy_with_release_true_on_free_dev_leaves_it_free() -> None:
    # Nothing to remove: the job must not try to delete a tag that is not there.
    decision = dev_hold.decide(manual("feature/x", release=True), None)

    assert decision.deploy is True
    assert decision.hold is HoldChange.KEEP
    assert decision.held_by_after is None


def test_main_push_after_release_deploys_again() -> None:
    released = dev_hold.decide(manual("feature/x", release_only=True), "feature/x")

    decision = dev_hold.decide(push_to_main(), released.held_by_after)

    assert decision.deploy is True


def test_manual_deploy_of_another_branch_while_held_is_refused() -> None:
    with pytest.raises(dev_hold.HoldConflict, match="feature/x"):
        dev_hold.decide(manual("feature/y"), "feature/x")


def test_manual_deploy_of_main_while_held_is_refused() -> None:
    with pytest.raises(dev_hold.HoldConflict):
        dev_hold.decide(manual("main"), "feature/x")


def test_manual_deploy_of_main_never_holds_dev() -> None:
    decision = dev_hold.decide(manual("main"), None)

    assert decision.deploy is True
    assert decision.hold is HoldChange.KEEP
    assert decision.held_by_after is None


def test_push_from_another_branch_is_a_mistake() -> None:
    with pytest.raises(ValueError, match="only from main"):
        dev_hold.decide(Request(event=Event.PUSH, branch="feature/x"), None)


def test_a_branch_name_cannot_break_out_of_the_notice_code_span() -> None:
    decision = dev_hold.decide(push_to_main(), "evil`<script>")

    assert "``" not in decision.notice
    assert "`evil'<script>`" in decision.notice


# --- reading the hold from the stack tags ---


def test_held_by_reads_the_hold_tag() -> None:
    tags = dev_hold.parse_tags(json.dumps({"pulumi:project": "blog-api", dev_hold.HOLD_TAG: "feature/x"}))

    assert dev_hold.held_by(tags) == "feature/x"


def test_no_tag_or_an_empty_tag_means_free() -> None:
    assert dev_hold.held_by(dev_hold.parse_tags('{"pulumi:project": "blog-api"}')) is None
    assert dev_hold.held_by({dev_hold.HOLD_TAG: "  "}) is None


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"a": 1}'])
def test_unreadable_tags_are_an_error_not_free(text: str) -> None:
    with pytest.raises(dev_hold.BadTags):
        dev_hold.parse_tags(text)


# --- review stack names ---

STACK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def test_review_stack_of_a_plain_branch_is_readable() -> None:
    stack = dev_hold.review_stack("fix-login")

    assert stack.name == "review-fix-login"
    assert re.fullmatch(r"r-fix-log-[0-9a-f]{6}", stack.physical_prefix)


def test_review_stack_is_stable() -> None:
    assert dev_hold.review_stack("feature/Async_Path") == dev_hold.review_stack("feature/Async_Path")


def test_review_stack_is_sanitised() -> None:
    stack = dev_hold.review_stack("Feature/Async_Path..v2")

    assert stack.name.startswith("review-feature-async-path-v2-")
    assert STACK_NAME.match(stack.name)
    assert STACK_NAME.match(stack.physical_prefix)
    assert not stack.physical_prefix.endswith("-")


def test_branches_that_sanitise_alike_get_different_stacks() -> None:
    names = {dev_hold.review_stack(b) for b in ("feature/a", "feature-a", "Feature-A", "feature_a")}

    assert len({s.name for s in names}) == 4
    assert len({s.physical_prefix for s in names}) == 4


def test_review_names_are_length_limited() -> None:
    stack = dev_hold.review_stack("a" * 300)

    assert len(stack.name) <= len("review-") + dev_hold.MAX_REVIEW_SLUG + 1 + dev_hold.HASH_CHARS
    assert len(stack.physical_prefix) <= 16
    # Long names that share their start still differ.
    assert stack != dev_hold.review_stack("a" * 299)


def test_review_prefix_never_collides_with_dev_or_prod() -> None:
    for branch in ("d-st", "p-st", "dev", "prod", "st"):
        assert dev_hold.review_stack(branch).physical_prefix.startswith("r-")


def test_branch_of_only_symbols_still_gets_a_name() -> None:
    stack = dev_hold.review_stack("___")

    assert re.fullmatch(r"review-[0-9a-f]{6}", stack.name)
    assert re.fullmatch(r"r-[0-9a-f]{6}", stack.physical_prefix)


# --- the CLI the workflow calls ---


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("tags.json", "output", "summary")}
    paths["tags.json"].write_text("{}")
    return paths


def _decide(files: dict[str, Path], *args: str) -> int:
    return int(
        dev_hold.main(
            [
                "decide",
                "--tags-file",
                str(files["tags.json"]),
                "--output",
                str(files["output"]),
                "--summary",
                str(files["summary"]),
                *args,
            ]
        )
    )


def test_cli_skip_writes_outputs_and_the_summary_notice(files: dict[str, Path]) -> None:
    files["tags.json"].write_text(json.dumps({dev_hold.HOLD_TAG: "feature/x"}))

    status = _decide(files, "--event", "push", "--branch", "main", "--release", "")

    assert status == 0
    assert _outputs(files["output"]) == {
        "deploy": "false",
        "hold": "keep",
        "held-by": "feature/x",
        "hold-tag": dev_hold.HOLD_TAG,
    }
    assert "held by branch `feature/x`" in files["summary"].read_text()


def test_cli_branch_deploy_asks_the_job_to_set_the_hold(files: dict[str, Path]) -> None:
    status = _decide(files, "--event", "workflow_dispatch", "--branch", "feature/x", "--release", "false")

    assert status == 0
    outputs = _outputs(files["output"])
    assert (outputs["deploy"], outputs["hold"], outputs["held-by"]) == ("true", "set", "feature/x")


def test_cli_refusal_exits_non_zero_and_explains(files: dict[str, Path]) -> None:
    files["tags.json"].write_text(json.dumps({dev_hold.HOLD_TAG: "feature/x"}))

    status = _decide(files, "--event", "workflow_dispatch", "--branch", "feature/y")

    assert status == 1
    assert not files["output"].exists()
    assert "held by branch `feature/x`" in files["summary"].read_text()


def test_cli_verify_fails_when_the_backend_dropped_the_tag(files: dict[str, Path]) -> None:
    args = ["verify", "--tags-file", str(files["tags.json"]), "--summary", str(files["summary"])]

    assert dev_hold.main([*args, "--expect-held-by", "feature/x"]) == 1
    assert dev_hold.main([*args, "--expect-held-by", ""]) == 0


def test_cli_runs_as_a_plain_script_with_only_the_stdlib(tmp_path: Path) -> None:
    # The workflow runs it with the runner's python3, before the project is installed: -I ignores our venv's
    # site-packages and the environment, so a third-party import would fail here.
    output = tmp_path / "output"
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(DEV_HOLD_SCRIPT), "review-stack", "--branch", "feature/x"],
        capture_output=True,
        text=True,
        env={"GITHUB_OUTPUT": str(output)},
        check=False,
        timeout=30,
    )

    assert result.returncode == 0, result.stderr
    assert _outputs(output)["stack"] == dev_hold.review_stack("feature/x").name
