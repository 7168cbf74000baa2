"""The committed project and stack files, and the physical names every stack gives its resources."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.config import ARTIFACT_PATH_KEY, KEYS
from tests.infra.deployment import Deployment

REPO_ROOT = Path(__file__).resolve().parents[2]
PREFIXES = {"dev": "d-st", "prod": "p-st"}
# Inputs that are not names AWS makes unique per account and region, or that the user chooses.
NOT_PHYSICAL = {
    ("aws:apigatewayv2/stage:Stage", "name"),  # "$default", scoped to its API
    ("aws:apigatewayv2/domainName:DomainName", "domainName"),
}


def stack_file(stack: str) -> dict[str, Any]:
    return dict(yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())["config"])


def test_project_file_runs_infra_with_the_projects_virtualenv() -> None:
    project = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == "blog-api"
    assert project["main"] == "infra/"
    assert project["runtime"]["name"] == "python"
    assert project["runtime"]["options"]["virtualenv"] == ".venv"


@pytest.mark.parametrize("stack", sorted(PREFIXES))
def test_stack_file_sets_region_prefix_and_every_key_the_program_reads(stack: str) -> None:
    config = stack_file(stack)
    assert config["aws:region"] == "ap-northeast-1"
    assert config["blog-api:physicalPrefix"] == PREFIXES[stack]
    assert {key.removeprefix("blog-api:") for key in config if key.startswith("blog-api:")} == set(KEYS)
    assert f"blog-api:{ARTIFACT_PATH_KEY}" not in config


@pytest.mark.parametrize("stack", sorted(PREFIXES))
def test_stack_file_holds_no_plaintext_secret(stack: str) -> None:
    config = stack_file(stack)
    for key, value in config.items():
        if re.search(r"secret|privatekey|password|token|databaseurl", key, re.IGNORECASE):
            # Secrets are referred to by SSM parameter name, never given; an optional one (Cloudinary's)
            # is left empty until it is used.
            assert key.endswith("Param"), key
            assert value == "" or str(value).startswith(f"/{PREFIXES[stack]}/"), key
        assert not isinstance(value, dict) or "secure" not in value, key
        text = str(value)
        assert "BEGIN" not in text and "://" not in text.replace("https://api.github.com", "").replace(
            config["blog-api:httpsProxy"], ""
        ), key


def physical_names(deployment: Deployment) -> list[str]:
    found = []
    for resource in deployment.resources:
        if not resource.custom:
            continue
        name = resource.inputs.get("name")
        if name is not None and (resource.type, "name") not in NOT_PHYSICAL:
            found.append(name)
        tag = (resource.inputs.get("tags") or {}).get("Name")
        if tag is not None:
            found.append(tag)
    return found


def test_every_physical_name_carries_the_stack_prefix(deployment: Deployment) -> None:
    names = physical_names(deployment)
    assert len(names) >= 10
    for name in names:
        assert f"{deployment.prefix}-blog-api" in name, name


def test_dev_and_prod_share_no_physical_name(dev: Deployment, prod: Deployment) -> None:
    assert set(physical_names(dev)).isdisjoint(physical_names(prod))


def test_components_parent_their_resources(deployment: Deployment) -> None:
    components = {r.urn: r for r in deployment.resources if not r.custom}
    assert {r.type for r in components.values()} >= {
        "blog-api:infra:Network",
        "blog-api:infra:Function",
        "blog-api:infra:Api",
    }
    for resource in deployment.resources:
        if resource.custom:
            parent = components[resource.parent]
            assert resource.name.startswith(f"{parent.name}-"), resource.name


def test_first_delivery_quotes_the_number_of_resources_a_dev_stack_creates(dev: Deployment) -> None:
    # What `pulumi up` counts: every resource (custom and component) plus the stack itself; the page's
    # dev stack has one alarm address, so one subscription more than the committed file.
    page = (REPO_ROOT / "docs" / "first-delivery.md").read_text()
    (quoted,) = re.findall(r"\+ (\d+) created", page)
    assert dev.setting("alarmEmails") == "[]"
    assert int(quoted) == len(dev.resources) + 1 + 1
