from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import pytest

from function.errors import ConfigError
from function.settings import Settings
from shared import names


def test_missing_secret_refuses_to_start_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match=names.ENV_WEBHOOK_SECRET):
        Settings.from_env({})


def test_defaults_match_the_contract() -> None:
    settings = Settings.from_env({names.ENV_WEBHOOK_SECRET: "s3cret-value"})
    assert settings.github_api_url == "https://api.github.com"
    assert settings.database_url == "sqlite:///.data/blog.db"
    assert settings.article_source == "github"
    assert settings.articles_dir == "articles"
    assert settings.pass_through_path == "/events"
    assert settings.log_level == "INFO"
    assert settings.lambda_mode is False


def test_lambda_function_name_switches_to_lambda_mode() -> None:
    settings = Settings.from_env(
        {names.ENV_WEBHOOK_SECRET: "x" * 10, names.ENV_LAMBDA_FUNCTION_NAME: "d-st-blog-api"}
    )
    assert settings.lambda_mode is True


def test_param_variables_are_read_in_one_batch() -> None:
    calls: list[Sequence[str]] = []

    def reader(wanted: Sequence[str]) -> dict[str, str]:
        calls.append(list(wanted))
        return {"/blog/secret": "from-ssm-secret", "/blog/db": "mysql://u:p@db:4000/blog"}

    settings = Settings.from_env(
        {names.ENV_WEBHOOK_SECRET_PARAM: "/blog/secret", names.ENV_DATABASE_URL_PARAM: "/blog/db"}, reader
    )
    assert settings.webhook_secret == "from-ssm-secret"
    assert settings.database_url == "mysql://u:p@db:4000/blog"
    assert calls == [["/blog/db", "/blog/secret"]]


def test_missing_ssm_parameter_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="/blog/secret"):
        Settings.from_env({names.ENV_WEBHOOK_SECRET_PARAM: "/blog/secret"}, lambda wanted: {})


def test_secrets_are_not_in_repr() -> None:
    settings = Settings(webhook_secret="top-secret-123", database_url="mysql://u:hunter22@h/db")
    assert "top-secret-123" not in repr(settings)
    assert "hunter22" not in repr(settings)
    assert "hunter22" in settings.secrets()


def test_flask_run_without_secret_stops_with_a_message_naming_the_setting(tmp_path: object) -> None:
    # The app factory is what `flask --app function.app run` calls: it must refuse to build.
    code = "from function.app import create_app\ncreate_app()"
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "GITHUB_WEBHOOK_SECRET" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        (names.ENV_DATABASE_URL, "nonsense"),
        (names.ENV_DATABASE_URL, "sqlite:///"),
        (names.ENV_DATABASE_URL, "mysql://u:pw@h/db?ssl_ca=/no/such/ca.pem"),
        (names.ENV_LOG_LEVEL, "verbose"),
    ],
)
def test_a_malformed_setting_refuses_the_start_naming_it(variable: str, value: str) -> None:
    # A bad value must stop the app at start-up with its name, not answer 500 on every request.
    with pytest.raises(ConfigError, match=f"^{variable}"):
        Settings.from_env({names.ENV_WEBHOOK_SECRET: "s", variable: value}, lambda wanted: {})


def test_a_database_url_from_ssm_is_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"^DATABASE_URL: unsupported scheme"):
        Settings.from_env(
            {names.ENV_WEBHOOK_SECRET: "s", names.ENV_DATABASE_URL_PARAM: "/blog/db"},
            lambda wanted: {"/blog/db": "postgres://u:pw@h/db"},
        )
