"""Runs the Pulumi program under mocks once per scenario, each in its own process, for the whole session.

``pulumi.runtime.set_mocks`` configures process-wide state, so a scenario cannot share a process with
another one (or with the rest of the suite). Every scenario starts at once in a subprocess that writes
what the program registered as JSON; the tests only read those records.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.deployment import Deployment

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("mock_run.py")
ACCOUNT_ID = "123456789012"
CERTIFICATE_ARN = f"arn:aws:acm:ap-northeast-1:{ACCOUNT_ID}:certificate/0f1e2d3c-aaaa-bbbb-cccc-000000000000"
KMS_KEY_ARN = f"arn:aws:kms:ap-northeast-1:{ACCOUNT_ID}:key/9f8e7d6c-5b4a-3928-1706-aabbccddeeff"

EXISTING_VPC = "vpc-0a1b2c3d4e5f60718"
EXISTING_SUBNETS = ("subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002")
EXISTING_GROUP = "sg-0a1b2c3d4e5f60003"
ALARM_EMAILS = ("ops@yamada-blog.jp", "oncall@yamada-blog.jp")
CUSTOM_DOMAIN = "blog-api.yamada-blog.jp"
REVIEW_PREFIX = "r-fix-log-a1b2c3"
GITHUB_REPOSITORY = "yamada/blog-api"
OPERATOR_PRINCIPAL = f"arn:aws:iam::{ACCOUNT_ID}:role/yamada-admin"
EXISTING_OIDC_PROVIDER = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/token.actions.githubusercontent.com"

# scenario → (stack, config on top of the committed stack file)
SCENARIOS: dict[str, tuple[str, dict[str, str]]] = {
    "dev": ("dev", {}),
    "prod": ("prod", {}),
    "dev-scheduled": ("dev", {"blog-api:scheduleEnabled": "true"}),
    "dev-nat-gateway": ("dev", {"blog-api:natType": "gateway"}),
    "dev-existing-vpc": (
        "dev",
        {
            "blog-api:networkMode": "existing",
            "blog-api:vpcId": EXISTING_VPC,
            "blog-api:subnetIds": json.dumps(EXISTING_SUBNETS),
            "blog-api:securityGroupIds": json.dumps([EXISTING_GROUP]),
            "blog-api:vpcEndpoints": "true",
            "blog-api:httpsProxy": "http://10.30.0.10:3128",
        },
    ),
    "prod-custom": (
        "prod",
        {
            "blog-api:customDomainName": CUSTOM_DOMAIN,
            "blog-api:customDomainCertificateArn": CERTIFICATE_ARN,
            "blog-api:ssmKmsKey": KMS_KEY_ARN,
            "blog-api:noProxy": "internal.corp, db.corp",
            "blog-api:alarmEmails": json.dumps(ALARM_EMAILS),
            "blog-api:githubAppId": "1000001",
            "blog-api:reservedConcurrency": "40",
            "blog-api:siteUrl": "https://blog.kumo-corp.jp",
            "blog-api:corsAllowedOrigins": "https://blog.kumo-corp.jp,https://www.kumo-corp.jp",
            "blog-api:ogpImageUrlTemplate": "https://og.kumo-corp.jp/card?title={title}&slug={slug}",
            "blog-api:cloudinaryCloudName": "kumo-corp",
            "blog-api:cloudinaryOgpPublicId": "blog/og-base",
            "blog-api:cloudinaryApiSecretParam": "/p-st/blog-api/cloudinary-api-secret",
            "blog-api:ogpDefaultImageUrl": "https://blog.kumo-corp.jp/og.png",
        },
    ),
    # Semantic search on Bedrock through an endpoint URL, with its model and a key parameter.
    "dev-bedrock": (
        "dev",
        {
            "blog-api:embeddingProvider": "bedrock",
            "blog-api:embeddingUrl": "https://bedrock-runtime.vpce.kumo-corp.jp",
            "blog-api:embeddingModel": "amazon.titan-embed-text-v2:0",
            "blog-api:embeddingApiKeyParam": "/d-st/blog-api/embedding-api-key",
        },
    ),
    # dev on a customer managed key of its own, like prod.
    "dev-kms": ("dev", {"blog-api:ssmKmsKey": "create"}),
    # A review stack: dev's config (as the workflow copies it) on dev's network.
    "review": (
        "dev",
        {"blog-api:physicalPrefix": REVIEW_PREFIX, "blog-api:networkMode": "shared"},
    ),
    "prod-endpoints": ("prod", {"blog-api:vpcEndpoints": "true"}),
    # The account's bootstrap program (infra/bootstrap), with the settings a user gives it.
    "bootstrap": (
        "account",
        {
            "blog-api-bootstrap:githubRepository": GITHUB_REPOSITORY,
            "blog-api-bootstrap:operatorPrincipals": json.dumps([OPERATOR_PRINCIPAL]),
        },
    ),
    "bootstrap-existing-oidc": (
        "account",
        {
            "blog-api-bootstrap:githubRepository": GITHUB_REPOSITORY,
            "blog-api-bootstrap:oidcProviderArn": EXISTING_OIDC_PROVIDER,
        },
    ),
    "prod-snapstart": (
        "prod",
        {
            "blog-api:snapStart": "true",
            "blog-api:scheduleEnabled": "true",
            "blog-api:logGroupImport": "true",
        },
    ),
}
STACKS = ("dev", "prod")
RUN_TIMEOUT_SECONDS = 120


@pytest.fixture(scope="session")
def prebuilt_artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small zip standing in for a CI-built package (the program must use it as it is)."""
    path = tmp_path_factory.mktemp("artifact") / "blog-api-prebuilt.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("function/__init__.py", "")
    return path


@pytest.fixture(scope="session")
def deployments(tmp_path_factory: pytest.TempPathFactory, prebuilt_artifact: Path) -> dict[str, Deployment]:
    """Every scenario's record, all run in parallel, each in its own process started from ``infra/``."""
    out_dir = tmp_path_factory.mktemp("mock-runs")
    running: dict[str, tuple[subprocess.Popen[str], Path]] = {}
    for scenario, (stack, overrides) in SCENARIOS.items():
        out = out_dir / f"{scenario}.json"
        command = [
            sys.executable,
            str(RUNNER),
            stack,
            "--artifact",
            str(prebuilt_artifact),
            "--out",
            str(out),
        ]
        for key, value in overrides.items():
            command += ["--set", f"{key}={value}"]
        # The Pulumi CLI starts the program in its ``main`` directory; so does this.
        process = subprocess.Popen(
            command, cwd=REPO_ROOT / "infra", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        running[scenario] = (process, out)

    records: dict[str, Deployment] = {}
    failures: list[str] = []
    for scenario, (process, out) in running.items():
        try:
            _, stderr = process.communicate(timeout=RUN_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        if process.returncode != 0:
            failures.append(f"--- {scenario} (exit {process.returncode})\n{stderr[-4000:]}")
            continue
        records[scenario] = Deployment.load(out)
    if failures:
        pytest.fail("the Pulumi program failed under mocks:\n" + "\n".join(failures), pytrace=False)
    return records


@pytest.fixture(params=STACKS)
def deployment(request: pytest.FixtureRequest, deployments: dict[str, Deployment]) -> Iterator[Deployment]:
    """The committed dev and prod stacks, one after the other."""
    yield deployments[request.param]


@pytest.fixture
def dev(deployments: dict[str, Deployment]) -> Deployment:
    return deployments["dev"]


@pytest.fixture
def prod(deployments: dict[str, Deployment]) -> Deployment:
    return deployments["prod"]
