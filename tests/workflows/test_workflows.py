"""The workflow files: GitHub's schema, zizmor's security audits, and the deploy rules the issue asks for.

check-jsonschema uses the schema it vendors and zizmor runs ``--offline``: nothing here needs the network.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.workflows import REPO, WORKFLOW_FILES, WORKFLOWS, load_dev_hold

SHA_PIN = re.compile(r"^\s*(?:-\s+)?uses:\s*[\w.-]+/[\w./-]+@[0-9a-f]{40}\s+#\s*v\d+(\.\d+)*\s*$")
# A reusable workflow of this repository at the same commit (GitHub's self-repository form).
SELF_USES = re.compile(r"^\s*uses:\s*\$/\.github/workflows/[\w.-]+\.ya?ml\s*$")
# The releases current when the pins were last moved, all on Node 24: a pin below them is an old build.
CURRENT_MAJORS = {
    "actions/checkout": 7,
    "actions/setup-python": 7,
    "actions/upload-artifact": 7,
    "actions/download-artifact": 8,
    "aws-actions/configure-aws-credentials": 6,
    "pulumi/actions": 7,
}
AWS_CREDENTIALS = "aws-actions/configure-aws-credentials@"
DOWNLOAD_ARTIFACT = "actions/download-artifact@"
DEPLOY_JOBS = ("dev", "release-dev", "review", "destroy-review", "prod")


def _tool(name: str) -> str:
    """A console script of the project's virtualenv (next to this interpreter), else one on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"{name} is not installed; it is in the project's dev dependencies (pip install -e '.[dev]')"
        )
    return found


def _check_schema(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _zizmor(*paths: Path) -> tuple[int, list[dict[str, Any]]]:
    # --no-config and --no-ignores: neither a config file nor an inline ignore comment can hide a finding.
    result = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-config", "--no-ignores", "--format", "json", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    try:
        findings = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"zizmor printed no JSON (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.returncode, findings


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def _triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    # PyYAML (YAML 1.1) reads the bare key `on` as the boolean True.
    triggers = workflow["on"] if "on" in workflow else workflow[True]
    assert isinstance(triggers, dict)
    return triggers


def _jobs(name: str) -> dict[str, dict[str, Any]]:
    return _load(WORKFLOWS / name)["jobs"]


def _steps_using(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [step for step in job.get("steps", []) if str(step.get("uses", "")).startswith(action)]


def _run_text(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job.get("steps", []))


# --- schema and security lint ---


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_workflow_matches_githubs_workflow_schema(path: Path) -> None:
    result = _check_schema(path)

    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - nonsense: 1\n")

    assert _check_schema(broken).returncode != 0


def test_zizmor_finds_nothing_in_our_workflows() -> None:
    status, findings = _zizmor(*WORKFLOW_FILES)

    summary = [f"{f['ident']}: {f['desc']}" for f in findings]
    assert findings == [], summary
    assert status == 0


def test_zizmor_does_report_the_mistakes_it_guards_against(tmp_path: Path) -> None:
    bad = tmp_path / ".github" / "workflows" / "bad.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "name: bad\non: pull_request\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n'
    )

    status, findings = _zizmor(bad)

    assert status != 0
    assert {"unpinned-uses", "template-injection", "artipacked", "excessive-permissions"} <= {
        f["ident"] for f in findings
    }


# --- the rules of the issue, checked on the parsed files ---


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_by_sha_with_a_version_comment(path: Path) -> None:
    uses_lines = [line for line in path.read_text().splitlines() if re.match(r"^\s*(-\s+)?uses:", line)]

    assert uses_lines
    assert [line for line in uses_lines if not SHA_PIN.match(line) and not SELF_USES.match(line)] == []


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_current_release(path: Path) -> None:
    pins = re.findall(r"uses:\s*([\w.-]+/[\w.-]+)@[0-9a-f]{40}\s+#\s*v(\d+)", path.read_text())
    assert pins
    for action, major in pins:
        assert action in CURRENT_MAJORS, f"{action}: add it to CURRENT_MAJORS"
        assert int(major) >= CURRENT_MAJORS[action], f"{action} pinned to v{major}"


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_no_default_permissions_and_every_job_declares_its_own(path: Path) -> None:
    workflow = _load(path)

    assert workflow["permissions"] == {}
    assert [name for name, job in workflow["jobs"].items() if "permissions" not in job] == []


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_checkouts_do_not_persist_credentials(path: Path) -> None:
    for name, job in _load(path)["jobs"].items():
        for step in _steps_using(job, "actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, name


def test_only_jobs_that_assume_an_aws_role_get_an_oidc_token() -> None:
    for name, job in {**_jobs("ci.yaml"), **_jobs("deploy.yaml")}.items():
        wants_token = job["permissions"].get("id-token") == "write"
        assert wants_token == bool(_steps_using(job, AWS_CREDENTIALS)), name


def test_aws_credentials_come_from_a_role_never_from_keys() -> None:
    for name, job in _jobs("deploy.yaml").items():
        for step in _steps_using(job, AWS_CREDENTIALS):
            inputs = step["with"]
            assert "role-to-assume" in inputs, name
            assert not {"aws-access-key-id", "aws-secret-access-key"} & set(inputs), name


def test_ci_runs_the_readme_test_command_then_builds_the_zip_after_the_tests() -> None:
    workflow = _load(WORKFLOWS / "ci.yaml")
    triggers = _triggers(workflow)
    jobs = workflow["jobs"]
    (setup,) = _steps_using(jobs["test"], "actions/setup-python@")

    # Branch pushes run it directly; main and pull requests through deploy.yaml, which waits for it.
    assert triggers["push"] == {"branches-ignore": ["main"]}
    assert "workflow_call" in triggers
    assert "bash .ci/run" in _run_text(jobs["test"])
    assert setup["with"]["cache"] == "pip" and setup["with"]["cache-dependency-path"] == "uv.lock"
    assert jobs["package"]["needs"] == "test"
    assert "make package" in _run_text(jobs["package"])
    (upload,) = _steps_using(jobs["package"], "actions/upload-artifact@")
    assert upload["with"]["name"] == "lambda-zip-${{ github.sha }}"
    assert "sha256sum" in _run_text(jobs["package"])


def test_main_and_pull_requests_run_ci_before_anything_deploys() -> None:
    workflow = _load(WORKFLOWS / "deploy.yaml")
    jobs = workflow["jobs"]

    assert jobs["ci"]["uses"] == "$/.github/workflows/ci.yaml"
    assert "refs/heads/main" in jobs["ci"]["if"] and "pull_request" in jobs["ci"]["if"]
    assert jobs["locate"]["needs"] == "ci"
    # A failed CI stops the run; a skipped one (tags, manual runs) lets locate find an earlier CI's zip.
    assert "needs.ci.result == 'success'" in jobs["locate"]["if"]
    assert "find-artifact" in _run_text(jobs["locate"])
    assert _triggers(workflow)["push"]["branches"] == ["main"]


def test_each_stack_has_one_concurrency_group_that_never_cancels_a_running_update() -> None:
    jobs = _jobs("deploy.yaml")

    for name in (*DEPLOY_JOBS, "preview"):
        concurrency = jobs[name]["concurrency"]
        assert concurrency["cancel-in-progress"] is False, name
    groups = {name: jobs[name]["concurrency"]["group"] for name in DEPLOY_JOBS}
    # dev's deploy and release share a group; a branch's review deploy and destroy share one.
    assert groups["dev"] == groups["release-dev"] == "pulumi-stack-dev"
    assert groups["prod"] == "pulumi-stack-prod"
    assert groups["review"].startswith("pulumi-stack-review-")
    assert groups["destroy-review"].startswith("pulumi-stack-review-")
    assert len({groups["dev"], groups["prod"], groups["review"]}) == 3


def test_prod_waits_for_the_prod_environment_and_runs_on_release_tags() -> None:
    workflow = _load(WORKFLOWS / "deploy.yaml")
    triggers = _triggers(workflow)
    prod = workflow["jobs"]["prod"]

    assert prod["environment"] == "prod"
    assert "v*" in triggers["push"]["tags"]
    assert "refs/tags/v" in prod["if"]
    assert "prod" in triggers["workflow_dispatch"]["inputs"]["target"]["options"]


def test_nothing_in_deploy_builds_and_every_deploy_uses_the_commits_verified_zip() -> None:
    jobs = _jobs("deploy.yaml")

    assert "make package" not in (WORKFLOWS / "deploy.yaml").read_text()
    for name in ("dev", "prod", "prod-preview", "review", "preview"):
        job = jobs[name]
        needs = [job["needs"]] if isinstance(job["needs"], str) else job["needs"]
        assert "locate" in needs, name
        # The zip's download (prod also downloads the approved plan, checked below).
        (download,) = [
            s for s in _steps_using(job, DOWNLOAD_ARTIFACT) if "prod-plan" not in s["with"]["name"]
        ]
        assert download["with"]["name"] == "${{ needs.locate.outputs.artifact-name }}", name
        assert download["with"]["run-id"] == "${{ needs.locate.outputs.run-id }}", name
        assert job["permissions"]["actions"] == "read", name
        assert '"$PROMOTE_SCRIPT" verify' in _run_text(job), name
        uses_path = "blog-api:artifactPath=" in _run_text(job) or any(
            "blog-api:artifactPath" in str(step.get("with", {}).get("config-map", ""))
            for step in job["steps"]
        )
        assert uses_path, name


def test_deploy_jobs_check_locate_explicitly_so_a_skipped_ci_does_not_skip_them() -> None:
    # GitHub skips a job when any job it depends on, even indirectly, was skipped, unless its condition
    # says otherwise; tags and manual runs skip `ci`.
    jobs = _jobs("deploy.yaml")
    for name in ("dev", "prod", "prod-preview", "review", "preview"):
        assert jobs[name]["if"].startswith("!cancelled() && needs.locate.result == 'success'"), name


def test_every_pulumi_up_records_the_digest_it_deployed() -> None:
    runs = [
        " ".join(str(step["run"]).replace("\\\n", " ").split())
        for job in _jobs("deploy.yaml").values()
        for step in job.get("steps", [])
        if "pulumi up --yes" in str(step.get("run", ""))
    ]
    assert len(runs) == 3  # dev, prod, review
    assert all('--message "$REF@$SHA sha256:$DIGEST"' in run for run in runs), runs


def test_a_release_previews_the_zip_that_ran_on_dev_before_approval() -> None:
    jobs = _jobs("deploy.yaml")
    preview, prod = jobs["prod-preview"], jobs["prod"]

    assert preview["if"] == prod["if"].replace(" && needs.prod-preview.result == 'success'", "")
    assert "refs/tags/v" in prod["if"] and "needs.prod-preview.result == 'success'" in prod["if"]
    assert prod["needs"] == ["locate", "prod-preview"]
    assert prod["environment"] == "prod" and preview["environment"] == "prod-preview"
    text = _run_text(preview)
    assert text.index("ran-on-dev") < text.index("pulumi preview --diff --stack prod")
    assert "GITHUB_STEP_SUMMARY" in text
    # prod deploys only the digest that was previewed.
    assert "needs.prod-preview.outputs.digest" in str(prod["steps"])
    assert "pulumi preview" not in _run_text(prod)


def test_previews_use_a_token_that_is_not_the_deploy_token() -> None:
    jobs = _jobs("deploy.yaml")
    (pulumi,) = _steps_using(jobs["preview"], "pulumi/actions@")
    assert pulumi["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_PREVIEW_TOKEN }}"
    assert jobs["prod-preview"]["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_PREVIEW_TOKEN }}"
    for name in ("dev", "prod", "review"):
        assert jobs[name]["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}", name


def test_pull_requests_get_a_preview_comment() -> None:
    preview = _jobs("deploy.yaml")["preview"]
    (pulumi,) = _steps_using(preview, "pulumi/actions@")

    assert "pull_request" in preview["if"]
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["comment-on-pr"] is True
    assert preview["permissions"]["pull-requests"] == "write"


def test_the_dev_rule_is_the_script_not_yaml() -> None:
    jobs = _jobs("deploy.yaml")
    dev_hold = load_dev_hold()

    for name in ("dev", "release-dev"):
        text = _run_text(jobs[name])
        assert '"$HOLD_SCRIPT" decide' in text, name
        assert '"$HOLD_SCRIPT" verify' in text, name
        # The tag name comes from the script's outputs, not from a copy in the YAML.
        assert dev_hold.HOLD_TAG not in (WORKFLOWS / "deploy.yaml").read_text()
    used = set(re.findall(r'"\$HOLD_SCRIPT" ([\w-]+)', (WORKFLOWS / "deploy.yaml").read_text()))
    assert used == {"decide", "verify", "review-stack"}
    for command in used:
        # Each subcommand the workflow calls exists: its --help exits 0.
        with pytest.raises(SystemExit) as exit_info:
            dev_hold.build_parser().parse_args([command, "--help"])
        assert exit_info.value.code == 0, command


def test_branch_deletion_destroys_that_branchs_review_stack() -> None:
    workflow = _load(WORKFLOWS / "deploy.yaml")
    triggers = _triggers(workflow)
    destroy = workflow["jobs"]["destroy-review"]

    assert "delete" in triggers
    assert "github.event.ref_type == 'branch'" in destroy["if"]
    assert "review-stack --branch" in _run_text(destroy)
    assert "pulumi destroy --yes" in _run_text(destroy)


# --- what runs is pinned, and prod applies what was approved ---


def _locked_version(package: str) -> str:
    lock = (REPO / "uv.lock").read_text()
    match = re.search(rf'\[\[package\]\]\nname = "{re.escape(package)}"\nversion = "([^"]+)"', lock)
    assert match is not None, package
    return match.group(1)


def test_the_pulumi_cli_pip_and_uv_are_pinned_to_exact_versions() -> None:
    deploy = _load(WORKFLOWS / "deploy.yaml")
    ci = _load(WORKFLOWS / "ci.yaml")
    version = deploy["env"]["PULUMI_VERSION"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    # The CLI is the release of the SDK the program runs with (they are released together).
    assert version == _locked_version("pulumi")
    for workflow in (deploy, ci):
        tools = workflow["env"]["PIP_TOOLS"].split()
        assert [t.split("==")[0] for t in tools] == ["pip", "uv"]
        assert all(re.fullmatch(r"[a-z]+==\d+(\.\d+)+", t) for t in tools), tools
    assert deploy["env"]["PIP_TOOLS"] == ci["env"]["PIP_TOOLS"]
    # make install takes them from the environment; by default it upgrades to the newest.
    makefile = (REPO / "Makefile").read_text()
    assert "PIP_TOOLS ?= pip uv" in makefile and "--upgrade $(PIP_TOOLS)" in makefile
    assert "--upgrade pip uv" not in makefile
    for job in deploy["jobs"].values():
        for step in _steps_using(job, "pulumi/actions@"):
            assert step["with"]["pulumi-version"] == "${{ env.PULUMI_VERSION }}"


def test_prod_applies_the_plan_its_approver_saw() -> None:
    jobs = _jobs("deploy.yaml")
    preview, prod = jobs["prod-preview"], jobs["prod"]
    saved = " ".join(_run_text(preview).replace("\\\n", " ").split())
    assert '--save-plan "$RUNNER_TEMP/plan/prod-plan.json"' in saved
    (upload,) = _steps_using(preview, "actions/upload-artifact@")
    plan_downloads = [s for s in _steps_using(prod, DOWNLOAD_ARTIFACT) if "prod-plan" in s["with"]["name"]]
    (download,) = plan_downloads
    # The same run and attempt: a re-run previews again before anything is applied.
    assert upload["with"]["name"] == download["with"]["name"]
    assert "github.run_id" in upload["with"]["name"] and "github.run_attempt" in upload["with"]["name"]
    up = next(s for s in prod["steps"] if "pulumi up" in str(s.get("run", "")))
    assert up["env"]["PLAN"] == "${{ runner.temp }}/plan/prod-plan.json"
    command = " ".join(str(up["run"]).replace("\\\n", " ").split())
    assert '--plan "$PLAN"' in command and "--diff" in command
    texts = [str(s.get("run", "")) for s in prod["steps"]]
    assert next(i for i, t in enumerate(prod["steps"]) if t is download) < next(
        i for i, t in enumerate(texts) if "pulumi up" in t
    )


def test_a_release_reads_devs_whole_history() -> None:
    text = _run_text(_jobs("deploy.yaml")["prod-preview"])
    assert '"$PROMOTE_SCRIPT" ran-on-dev --digest "$DIGEST" --stack dev' in text
    # No single `pulumi stack history` call, which returns ten entries.
    assert "pulumi stack history" not in text


def test_review_stacks_start_on_devs_network() -> None:
    text = _run_text(_jobs("deploy.yaml")["review"])
    assert 'pulumi config set --stack "$STACK" blog-api:networkMode shared' in text
    assert text.index("config cp --stack dev") < text.index("networkMode shared")
