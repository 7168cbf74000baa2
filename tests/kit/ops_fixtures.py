"""Fixtures for the command-line and operations tests (a pytest plugin of the kit): fake AWS
credentials for moto, the App's hook-deliveries API on the GitHub stand-in, and the environment
``blog-api`` reads to reach them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.cli import run_cli
from tests.kit.github_fixtures import AppKey
from tests.kit.github_standin import GitHubStandIn
from tests.kit.hook_deliveries import HookDeliveries

REGION = "us-east-1"
# Anything on the machine that could send boto3 (or urllib3) elsewhere than where a test points it.
_LEAKY_ENV = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_CA_BUNDLE",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials and a region for moto; no profile, endpoint, CA bundle or proxy from the machine."""
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def hook_deliveries(github: GitHubStandIn) -> HookDeliveries:
    return HookDeliveries(github).install()


@pytest.fixture
def app_env(github: GitHubStandIn, github_app_key: AppKey, tmp_path: Path) -> dict[str, str | None]:
    """What ``blog-api`` needs to talk to the stand-in as the test App, with a SQLite database (made by
    ``init-db``: no other command creates one)."""
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/ops.db",
        "DATABASE_URL_PARAM": None,
        "GITHUB_APP_ID": str(github.app_id),
        "GITHUB_APP_PRIVATE_KEY": github_app_key.private_pem,
        "GITHUB_APP_PRIVATE_KEY_PARAM": None,
        "GITHUB_API_URL": github.url,
        "HTTPS_PROXY": None,
        "https_proxy": None,
        "GITHUB_WEBHOOK_SECRET": None,
        "GITHUB_WEBHOOK_SECRET_PARAM": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    return env
