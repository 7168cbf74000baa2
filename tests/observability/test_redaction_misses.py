"""Secrets an outside review found passing the redaction, each one checked here."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask

from function.api.http_errors import to_response
from function.errors import SourcePermanentError
from function.observability.logs import REDACTED, Redactor
from function.settings import Settings
from tests.kit.cli import run_cli

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "ghs_" + "a1B2" * 9

MISSES = {
    "token after a word character": (f"installation_token_{TOKEN}", TOKEN[4:]),
    "token after a digit-free prefix": (f"token={TOKEN}&x=1", TOKEN[4:]),
    "url password with a slash": ("mysql://blog:pa/ss-w0rd@db.corp:4000/blog", "ss-w0rd"),
    "url password with a quote": ("mysql://blog:it's-s3cret@db.corp:4000/blog", "s3cret"),
    "url password with a space": ("mysql://blog:two w0rds-pw@db.corp:4000/blog", "w0rds-pw"),
    "cookie line": ("Cookie: session=abc123def456; theme=dark", "abc123def456"),
    "set-cookie line": ("Set-Cookie: user_session=Zx9Yw8Vu7; path=/; HttpOnly", "Zx9Yw8Vu7"),
    "api key line": ("X-Api-Key: k-8f7e6d5c4b3a", "8f7e6d5c4b3a"),
    "api key in a dict": ("{'x-api-key': 'k-8f7e6d5c4b3a'}", "8f7e6d5c4b3a"),
    "aws access key id": ("credentials AKIAIOSFODNN7EXAMPLE loaded", "IOSFODNN7EXAMPLE"),
    "aws temporary key id": ("key=ASIAY34FZKBOKMUTVV7A", "Y34FZKBOKMUTVV7A"),
    "aws secret key": (f"secret {AWS_SECRET} here", AWS_SECRET[5:]),
    "aws secret key named": (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET[5:]),
    "token after a letter": (f"token value x{TOKEN}", TOKEN[4:]),
    "fine-grained token after a letter": ("pat:xgithub_pat_" + "Ab1_" * 10, "Ab1_" * 10),
    "aws session token": (
        "aws_session_token=IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH",
        "IQoJb3JpZ2lu",
    ),
    "aws session token named": (
        '{"AWS_SESSION_TOKEN": "FwoGZXIvYXdzEJr+/+/+wEaDExample/TokenValue"}',
        "FwoGZXIv",
    ),
    "aws session token as a line": ("aws_session_token = FwoGZXIvYXdzEJr/+wEaDExampleTokenValue", "FwoGZXIv"),
    "ssl key password": ("mysql://u@db.corp/blog?ssl_key=/k.pem&ssl_key_password=hunter2-key", "hunter2-key"),
}


@pytest.mark.parametrize("case", sorted(MISSES))
def test_each_missed_shape_is_redacted(case: str) -> None:
    text, leak = MISSES[case]
    out = Redactor().text(f"before {text} after")
    assert leak not in out and REDACTED in out, out


def test_git_shas_and_paths_stay_readable() -> None:
    text = "synced 1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c: articles/aws-lambda-arm64-migration.md"
    assert Redactor().text(text) == text


def test_the_database_password_is_redacted_as_written_and_url_decoded() -> None:
    settings = Settings(webhook_secret="w" * 40, database_url="mysql://app:p%40ss%2Fw0rd-xyz@db.corp/blog")
    redactor = Redactor(settings.secrets())
    for quoted in ("p@ss/w0rd-xyz", "p%40ss%2Fw0rd-xyz"):
        assert "w0rd-xyz" not in redactor.text(f"driver said: Access denied (using password {quoted})")


def test_the_tls_key_password_is_a_configured_secret(tmp_path: Path) -> None:
    key = tmp_path / "client.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    url = f"mysql://app:pw@db.corp/blog?ssl_ca={key}&ssl_key={key}&ssl_key_password=k3y%20pass-word"
    secrets = Settings(webhook_secret="w" * 40, database_url=url).secrets()
    assert "k3y pass-word" in secrets


def test_a_message_is_redacted_before_it_is_cut() -> None:
    # GIVEN a source error whose message ends, past the cut, in a token and a configured secret
    message = "x" * 485 + " " + TOKEN  # a cut at 500 leaves "ghs_" and 10 characters: no token's shape
    with Flask(__name__).app_context():
        response, status = to_response(SourcePermanentError(message))
    body = response.get_json()["message"]
    # THEN what is left of the token is gone too, not only whole tokens
    assert status == 422
    assert "ghs_a1B2" not in body and "a1B2a1" not in body
    assert len(body) <= 500


def test_a_configured_secret_cut_in_half_is_still_redacted() -> None:
    secret = "configured-secret-value-0123456789"
    assert secret[:20] not in Redactor([secret]).text(("y" * 30 + secret)[:50])


def test_the_cli_redacts_the_configured_secret_values(tmp_path: Path) -> None:
    secret = "the-webhook-secret-value-0123456789"
    db = f"sqlite:///{tmp_path}/blog.db"
    assert run_cli("init-db", env={"DATABASE_URL": db}).exit_code == 0
    # WHEN a command's error line quotes a configured secret (here the name typed)
    result = run_cli(
        "users",
        "set-installation",
        "--name",
        secret,
        "--installation-id",
        "5",
        env={"DATABASE_URL": db, "GITHUB_WEBHOOK_SECRET": secret},
    )
    assert result.exit_code == 1
    assert secret not in result.stderr and REDACTED in result.stderr
