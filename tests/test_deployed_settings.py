"""What a deployed function refuses at start-up that a laptop may do: a guessable webhook secret, a
database across the network in clear, and credentials sent to GitHub over plain http."""

from __future__ import annotations

from pathlib import Path

import pytest

from function.errors import ConfigError
from function.settings import Settings

ON_LAMBDA = {"AWS_LAMBDA_FUNCTION_NAME": "d-st-blog-api", "GITHUB_WEBHOOK_SECRET": "a" * 64}


def test_a_short_webhook_secret_is_refused_on_lambda_with_the_command_that_makes_one() -> None:
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET") as refused:
        Settings.from_env({**ON_LAMBDA, "GITHUB_WEBHOOK_SECRET": "dev-secret"})
    assert "openssl rand -hex 32" in str(refused.value)
    assert "dev-secret" not in str(refused.value)
    with pytest.raises(ConfigError):
        Settings.from_env({**ON_LAMBDA, "GITHUB_WEBHOOK_SECRET": "x" * 31})
    assert Settings.from_env({**ON_LAMBDA, "GITHUB_WEBHOOK_SECRET": "x" * 32}).lambda_mode


def test_make_runs_short_secret_stays_allowed_in_local_inline_mode() -> None:
    assert Settings.from_env({"GITHUB_WEBHOOK_SECRET": "dev-secret"}).webhook_secret == "dev-secret"


def test_a_remote_database_without_tls_is_refused_on_lambda() -> None:
    with pytest.raises(ConfigError, match=r"DATABASE_URL connects to tidb\.internal without TLS") as refused:
        Settings.from_env({**ON_LAMBDA, "DATABASE_URL": "mysql://app:hunter22@tidb.internal:4000/blog"})
    assert "DATABASE_ALLOW_PLAINTEXT" in str(refused.value) and "ssl_ca" in str(refused.value)
    assert "hunter22" not in str(refused.value)


def test_tls_disabled_in_the_url_counts_as_no_tls(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    with pytest.raises(ConfigError, match="without TLS"):
        Settings.from_env(
            {**ON_LAMBDA, "DATABASE_URL": f"mysql://a:b@db.corp:4000/blog?ssl_ca={ca}&ssl_disabled=true"}
        )


@pytest.mark.parametrize(
    "extra",
    [
        {"DATABASE_URL": "mysql://app:pw@db.corp:4000/blog?ssl_ca={ca}"},
        {"DATABASE_URL": "mysql://app:pw@db.corp:4000/blog", "DATABASE_ALLOW_PLAINTEXT": "true"},
        {"DATABASE_URL": "mysql://app:pw@127.0.0.1:3306/blog"},
        {"DATABASE_URL": "mysql://app:pw@localhost:3306/blog"},
        {"DATABASE_URL": "sqlite:////tmp/blog.db"},
    ],
)
def test_tls_an_explicit_opt_out_or_a_local_database_start(extra: dict[str, str], tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    env = {**ON_LAMBDA, **{k: v.format(ca=ca) for k, v in extra.items()}}
    assert Settings.from_env(env).lambda_mode


def test_a_remote_database_without_tls_is_allowed_in_local_inline_mode() -> None:
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "DATABASE_URL": "mysql://a:b@db.corp/blog"})
    assert not settings.lambda_mode


@pytest.mark.parametrize(
    "url", ["http://github.corp.example/api/v3", "http://10.0.0.5", "ftp://x", "github.com"]
)
def test_github_api_url_must_be_https(url: str) -> None:
    with pytest.raises(ConfigError, match="GITHUB_API_URL must start with https://"):
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_API_URL": url})


@pytest.mark.parametrize(
    "url", ["https://github.corp.example/api/v3", "http://127.0.0.1:8080", "http://localhost:9"]
)
def test_github_api_url_may_be_plain_http_to_this_machine_only(url: str) -> None:
    assert Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_API_URL": url}).github_api_url == url
