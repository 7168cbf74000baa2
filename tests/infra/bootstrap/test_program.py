"""The bootstrap program under mocks: the OIDC provider and, per stack, the roles the workflows assume."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.infra.conftest import ACCOUNT_ID, EXISTING_OIDC_PROVIDER, GITHUB_REPOSITORY, OPERATOR_PRINCIPAL
from tests.infra.deployment import ROLE, Deployment

REPO_ROOT = Path(__file__).resolve().parents[3]
RUNNER = REPO_ROOT / "tests" / "infra" / "mock_run.py"
OIDC_PROVIDER = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
POLICY = "aws:iam/policy:Policy"
PROVIDER_ARN = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/token.actions.githubusercontent.com"


def roles(deployment: Deployment) -> dict[str, dict[str, Any]]:
    return {r.inputs["name"]: json.loads(r.inputs["assumeRolePolicy"]) for r in deployment.of_type(ROLE)}


def github_subjects(trust: dict[str, Any]) -> list[str]:
    (statement,) = trust["Statement"]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    condition = statement["Condition"]["StringEquals"]
    assert condition["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"
    return list(condition["token.actions.githubusercontent.com:sub"])


def test_it_creates_githubs_oidc_provider(deployments: dict[str, Deployment]) -> None:
    bootstrap = deployments["bootstrap"]
    provider = bootstrap.one(OIDC_PROVIDER).inputs
    assert provider["url"] == "https://token.actions.githubusercontent.com"
    assert provider["clientIdLists"] == ["sts.amazonaws.com"]
    assert bootstrap.outputs["oidcProviderArn"] == PROVIDER_ARN


def test_an_existing_provider_is_used_not_created(deployments: dict[str, Deployment]) -> None:
    existing = deployments["bootstrap-existing-oidc"]
    assert existing.of_type(OIDC_PROVIDER) == []
    for name, trust in roles(existing).items():
        if not name.endswith("-operator"):
            assert trust["Statement"][0]["Principal"] == {"Federated": EXISTING_OIDC_PROVIDER}, name
    # Without operatorPrincipals, the account's own principals (by their IAM policies) may assume it.
    operator = roles(existing)["p-st-blog-api-operator"]
    assert operator["Statement"][0]["Principal"] == {"AWS": [f"arn:aws:iam::{ACCOUNT_ID}:root"]}


def test_each_role_trusts_only_its_environments_of_this_repository(
    deployments: dict[str, Deployment],
) -> None:
    found = roles(deployments["bootstrap"])
    subject = f"repo:{GITHUB_REPOSITORY}:environment:"
    assert github_subjects(found["d-st-blog-api-preview"]) == [f"{subject}preview"]
    assert github_subjects(found["d-st-blog-api-deploy"]) == [f"{subject}dev", f"{subject}review"]
    assert github_subjects(found["p-st-blog-api-preview"]) == [f"{subject}prod-preview"]
    assert github_subjects(found["p-st-blog-api-deploy"]) == [f"{subject}prod"]
    for stack in ("d-st", "p-st"):
        operator = found[f"{stack}-blog-api-operator"]["Statement"][0]
        assert operator["Principal"] == {"AWS": [OPERATOR_PRINCIPAL]}
        assert operator["Action"] == "sts:AssumeRole"


def test_the_deploy_roles_get_their_policies_as_managed_policies(deployments: dict[str, Deployment]) -> None:
    bootstrap = deployments["bootstrap"]
    attached = {
        (a.inputs["role"], a.inputs["policyArn"].rsplit("/", 1)[1])
        for a in bootstrap.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    for prefix in ("d-st", "p-st"):
        role = f"{prefix}-blog-api-deploy"
        assert {(role, f"{role}-{part}") for part in ("app", "network", "key")} <= attached


def test_every_environment_the_workflow_uses_gets_a_role(deployments: dict[str, Deployment]) -> None:
    workflow = yaml.safe_load((REPO_ROOT / ".github" / "workflows" / "deploy.yaml").read_text())
    assuming = {
        job["environment"]
        for job in workflow["jobs"].values()
        if job.get("permissions", {}).get("id-token") == "write"
    }
    exported = deployments["bootstrap"].outputs["environmentRoleArns"]
    assert assuming == set(exported)
    assert exported["review"] == exported["dev"]  # review stacks are deployed with dev's role
    assert exported["prod"] == f"arn:aws:iam::{ACCOUNT_ID}:role/p-st-blog-api-deploy"


def test_the_prod_key_names_an_operator_role_the_bootstrap_creates(
    deployments: dict[str, Deployment],
) -> None:
    created = set(roles(deployments["bootstrap"]))
    for stack in ("dev", "prod"):
        config = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert config["blog-api:operatorRoleName"] in created
    key_policy = json.loads(deployments["prod"].one("aws:kms/key:Key").inputs["policy"])
    principals = {s["Principal"]["AWS"] for s in key_policy["Statement"]}
    own = {f"arn:aws:iam::{ACCOUNT_ID}:role/{name}" for name in created}
    # Every role the key policy names exists: the function's (the stack's own) or one the bootstrap made.
    assert principals - own == {
        f"arn:aws:iam::{ACCOUNT_ID}:root",
        f"arn:aws:iam::{ACCOUNT_ID}:role/p-st-blog-api-role",
    }


def test_a_placeholder_repository_stops_the_bootstrap_before_any_resource(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = subprocess.run(
        [sys.executable, str(RUNNER), "account", "--out", str(out),
         "--set", "blog-api-bootstrap:githubRepository=<owner>/<repo>"],
        cwd=REPO_ROOT / "infra" / "bootstrap", capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    record = json.loads(out.read_text())
    assert record["resources"] == []
    assert "blog-api-bootstrap:githubRepository is '<owner>/<repo>'" in record["error"]
    assert "pulumi config set githubRepository" in record["error"]


def test_the_bootstrap_project_runs_in_the_repositorys_virtualenv() -> None:
    project = yaml.safe_load((REPO_ROOT / "infra" / "bootstrap" / "Pulumi.yaml").read_text())
    assert project["name"] == "blog-api-bootstrap"
    assert (REPO_ROOT / "infra" / "bootstrap" / project["runtime"]["options"]["virtualenv"]).resolve() == (
        REPO_ROOT / ".venv"
    )


def test_the_docs_role_table_names_the_roles_the_bootstrap_gives_each_environment(
    deployments: dict[str, Deployment],
) -> None:
    page = (REPO_ROOT / "docs" / "deploying.md").read_text()
    section = page[page.index("## Secrets and roles") : page.index("## Moving from the CDK stack")]
    rows = re.findall(r"^\| `([\w-]+)` \| `([\w-]+)` \|", section, flags=re.MULTILINE)
    exported = deployments["bootstrap"].outputs["environmentRoleArns"]
    assert {env: f"arn:aws:iam::{ACCOUNT_ID}:role/{role}" for env, role in rows} == exported
