from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from function.errors import ConfigError
from function.settings import Settings
from shared.setting import SettingProblem, declared_settings, setting


def test_missing_secret_refuses_to_start_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET"):
        Settings.from_env({})


def test_defaults_match_the_contract() -> None:
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s3cret-value"})
    assert settings.github_api_url == "https://api.github.com"
    assert settings.database_url == "sqlite:///.data/blog.db"
    assert settings.article_source == "github"
    assert settings.articles_dir == "articles"
    assert settings.pass_through_path == "/events"
    assert settings.log_level == "INFO"
    assert settings.lambda_mode is False


def test_lambda_function_name_switches_to_lambda_mode() -> None:
    settings = Settings.from_env(
        {"GITHUB_WEBHOOK_SECRET": "x" * 64, "AWS_LAMBDA_FUNCTION_NAME": "d-st-blog-api"}
    )
    assert settings.lambda_mode is True


def test_param_variables_are_read_in_one_batch() -> None:
    calls: list[Sequence[str]] = []

    def reader(wanted: Sequence[str]) -> dict[str, str]:
        calls.append(list(wanted))
        return {"/blog/secret": "from-ssm-secret", "/blog/db": "mysql://u:p@db:4000/blog"}

    settings = Settings.from_env(
        {"GITHUB_WEBHOOK_SECRET_PARAM": "/blog/secret", "DATABASE_URL_PARAM": "/blog/db"}, reader
    )
    assert settings.webhook_secret == "from-ssm-secret"
    assert settings.database_url == "mysql://u:p@db:4000/blog"
    assert calls == [["/blog/db", "/blog/secret"]]


def test_missing_ssm_parameter_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="/blog/secret"):
        Settings.from_env({"GITHUB_WEBHOOK_SECRET_PARAM": "/blog/secret"}, lambda wanted: {})


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
        ("DATABASE_URL", "nonsense"),
        ("DATABASE_URL", "sqlite:///"),
        ("DATABASE_URL", "mysql://u:pw@h/db?ssl_ca=/no/such/ca.pem"),
        ("LOG_LEVEL", "verbose"),
        ("ALARM_TOPIC_ARN", "d-st-blog-api-alarms"),
    ],
)
def test_a_malformed_setting_refuses_the_start_naming_it(variable: str, value: str) -> None:
    # A bad value must stop the app at start-up with its name, not answer 500 on every request.
    with pytest.raises(ConfigError, match=f"^{variable}"):
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", variable: value}, lambda wanted: {})


def test_the_alarm_topic_is_read_for_the_webhooks() -> None:
    arn = "arn:aws:sns:us-east-1:123456789012:d-st-blog-api-alarms"
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "ALARM_TOPIC_ARN": arn})
    assert settings.alarm_topic_arn == arn
    assert Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s"}).alarm_topic_arn is None


def test_a_database_url_from_ssm_is_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"^DATABASE_URL: unsupported scheme"):
        Settings.from_env(
            {"GITHUB_WEBHOOK_SECRET": "s", "DATABASE_URL_PARAM": "/blog/db"},
            lambda wanted: {"/blog/db": "postgres://u:pw@h/db"},
        )


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"


def test_the_github_source_needs_the_app_id_and_key_at_start_up() -> None:
    # The app starting without them answered 500 on the first push, and recorded nothing.
    with pytest.raises(ConfigError, match=r"^GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY .* not set") as caught:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s"}, require_source=True)
    assert "ARTICLE_SOURCE=dir:PATH" in str(caught.value)  # the other way out is named too


def test_the_key_may_come_from_its_ssm_name() -> None:
    settings = Settings.from_env(
        {
            "GITHUB_WEBHOOK_SECRET": "s",
            "GITHUB_APP_ID": "123456",
            "GITHUB_APP_PRIVATE_KEY_PARAM": "/blog/app-key",
        },
        lambda wanted: {"/blog/app-key": PEM},
        require_source=True,
    )
    assert settings.github_private_key == PEM


def test_only_the_missing_app_setting_is_named() -> None:
    with pytest.raises(ConfigError, match=r"^GITHUB_APP_ID not set"):
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_PRIVATE_KEY": PEM}, require_source=True)


def test_a_folder_source_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^ARTICLE_SOURCE=dir:.*no such folder"):
        Settings.from_env(
            {"GITHUB_WEBHOOK_SECRET": "s", "ARTICLE_SOURCE": f"dir:{tmp_path}/nope"},
            require_source=True,
        )
    assert Settings.from_env(
        {"GITHUB_WEBHOOK_SECRET": "s", "ARTICLE_SOURCE": f"dir:{tmp_path}"}, require_source=True
    ).source_dir == str(tmp_path)


def test_commands_that_need_no_source_start_without_the_app_settings() -> None:
    # init-db, users, deliveries: the CLI reads settings without require_source.
    assert Settings.from_env({}, require_secret=False).github_app_id is None


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("GITHUB_APP_ID", "my-blog-app", "must be the App's numeric id"),
        ("GITHUB_APP_PRIVATE_KEY", "MIIEowIBAAKCAQEA", "is not a PEM private key"),
        # A PEM pasted into one line, with literal \n: what a shell export often makes of it.
        ("GITHUB_APP_PRIVATE_KEY", PEM.replace("\n", "\\n"), "is not a PEM private key"),
        ("GITHUB_API_URL", "api.github.com", "must start with https://"),
    ],
)
def test_a_malformed_app_setting_is_named_with_its_fix(variable: str, value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=f"^{variable} {says}") as caught:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", variable: value})
    assert value not in str(caught.value)  # a key, even a broken one, is never echoed


def test_unreadable_ssm_parameters_are_one_line_naming_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # No region and no credentials: botocore's own error would be a traceback.
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    with pytest.raises(ConfigError, match=r"^cannot read the SSM parameters /blog/secret: ") as caught:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET_PARAM": "/blog/secret"})
    assert "\n" not in str(caught.value)
    assert "AWS_REGION" in str(caught.value)


def _flask_run(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``flask --app function.app run`` as a newcomer types it (a port nothing listens on: if it did
    start, the time-out would fail the test)."""
    project = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "function.app", "run", "--port", "1"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(project), "HOME": str(cwd), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "names_it"),
    [
        ({}, "GITHUB_WEBHOOK_SECRET (or GITHUB_WEBHOOK_SECRET_PARAM) is not set"),
        ({"GITHUB_WEBHOOK_SECRET": "s"}, "GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY"),
        ({"GITHUB_WEBHOOK_SECRET": "s", "LOG_LEVEL": "loud"}, "LOG_LEVEL must be one of"),
    ],
)
def test_flask_run_refuses_in_one_line_naming_the_setting(
    tmp_path: Path, env: dict[str, str], names_it: str
) -> None:
    result = _flask_run(env, tmp_path)

    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and names_it in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


# Adding a setting is one declaration: reading, checking, keyword construction and the documentation's
# table follow from it (docs/development.md, "Add a setting").
def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise SettingProblem("must be a whole number") from None


@declared_settings
class WithRetries(Settings):
    fetch_retries: int = setting(
        env="FETCH_RETRIES",
        doc="how often a failed fetch is tried again",
        parse=_whole_number,
        default=3,
        check=lambda value: None if 0 <= value <= 10 else "must be between 0 and 10",
    )


def test_a_new_declaration_is_read_with_its_default_and_parser() -> None:
    assert WithRetries.from_env({"GITHUB_WEBHOOK_SECRET": "s"}).fetch_retries == 3
    assert WithRetries.from_env({"GITHUB_WEBHOOK_SECRET": "s", "FETCH_RETRIES": "5"}).fetch_retries == 5
    assert WithRetries(webhook_secret="s", fetch_retries=2).fetch_retries == 2


@pytest.mark.parametrize(
    ("value", "says"), [("eleven", "must be a whole number"), ("11", "must be between 0 and 10")]
)
def test_a_new_declaration_is_checked_naming_its_variable(value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=f"^FETCH_RETRIES {says}$"):
        WithRetries.from_env({"GITHUB_WEBHOOK_SECRET": "s", "FETCH_RETRIES": value})


def test_a_new_declaration_has_its_row_in_the_documentation() -> None:
    from function.settings_docs import table

    rows = table(WithRetries).splitlines()
    assert rows[-1] == "| `FETCH_RETRIES` | how often a failed fetch is tried again | `3` | — |"
    assert len(rows) == len(table().splitlines()) + 1


def test_the_images_settings_default_to_a_local_folder_served_by_the_app() -> None:
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s"})
    assert (settings.images_dir, settings.asset_dir, settings.asset_url) == (
        "images",
        ".data/assets",
        "/assets",
    )
    assert settings.asset_bucket is None
    assert (settings.asset_max_bytes, settings.asset_grace_days) == (5 * 1024 * 1024, 7)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ASSET_MAX_BYTES", "0"),
        ("ASSET_MAX_BYTES", "5MB"),
        ("ASSET_PUSH_MAX_BYTES", "-1"),
        ("ASSET_GRACE_DAYS", "seven"),
        ("ARTICLE_IMAGES_DIR", "../secrets"),
        ("ASSET_URL", "javascript:alert(1)"),
        ("ASSET_URL", "https://cdn.example.com/?x=<y>"),
    ],
)
def test_a_malformed_images_setting_refuses_the_start_naming_it(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", variable: value}, lambda wanted: {})


CLOUDINARY_ENV = {
    "CLOUDINARY_CLOUD_NAME": "blog-cloud",
    "CLOUDINARY_OGP_PUBLIC_ID": "og/base",
    "CLOUDINARY_API_SECRET": "cloudinary-secret-value",
}


def test_the_share_image_settings_are_read() -> None:
    settings = Settings.from_env(
        {
            "GITHUB_WEBHOOK_SECRET": "s",
            "OGP_IMAGE_URL_TEMPLATE": "https://og.example/card?title={title}&by={user}&s={slug}",
            "OGP_DEFAULT_IMAGE_URL": "https://blog.example/og.png",
            **CLOUDINARY_ENV,
        }
    )
    assert settings.ogp_image_url_template == "https://og.example/card?title={title}&by={user}&s={slug}"
    assert settings.ogp_default_image_url == "https://blog.example/og.png"
    assert (settings.cloudinary_cloud_name, settings.cloudinary_ogp_public_id) == ("blog-cloud", "og/base")
    assert "cloudinary-secret-value" not in repr(settings)
    assert "cloudinary-secret-value" in settings.secrets()


def test_the_cloudinary_secret_may_come_from_its_ssm_name() -> None:
    env = {**CLOUDINARY_ENV, "GITHUB_WEBHOOK_SECRET": "s", "CLOUDINARY_API_SECRET_PARAM": "/blog/cloudinary"}
    del env["CLOUDINARY_API_SECRET"]
    settings = Settings.from_env(env, lambda wanted: {"/blog/cloudinary": "from-ssm"})
    assert settings.cloudinary_api_secret == "from-ssm"


@pytest.mark.parametrize("left_out", sorted(CLOUDINARY_ENV))
def test_the_cloudinary_settings_go_together(left_out: str) -> None:
    env = {k: v for k, v in CLOUDINARY_ENV.items() if k != left_out}
    with pytest.raises(ConfigError, match=f"^{left_out}") as refused:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", **env})
    assert "cloudinary-secret-value" not in str(refused.value)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("OGP_IMAGE_URL_TEMPLATE", "og.example/{title}", "http(s) URL"),
        ("OGP_IMAGE_URL_TEMPLATE", "https://og.example/{name}", "only {title}, {slug} and {user}"),
        ("OGP_IMAGE_URL_TEMPLATE", "https://og.example/{title!r}", "only {title}"),
        ("OGP_IMAGE_URL_TEMPLATE", "https://og.example/{title", "unmatched brace"),
        ("OGP_DEFAULT_IMAGE_URL", "og.png", "https://"),
        ("CLOUDINARY_CLOUD_NAME", "blog cloud", "letters, digits"),
        ("CORS_ALLOWED_ORIGINS", "*,https://blog.example.com", "'*' alone"),
        ("CORS_ALLOWED_ORIGINS", "https://blog.example.com/", "no trailing '/'"),
    ],
)
def test_a_malformed_share_image_or_cors_setting_is_named(variable: str, value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=f"^{variable}") as refused:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", variable: value})
    assert says in str(refused.value)


def test_any_origin_may_be_allowed_alone() -> None:
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "CORS_ALLOWED_ORIGINS": " * "})
    assert settings.cors_allowed_origins == ("*",)


EMBEDDING_KEY = "sk-embedding-key-0123456789abcdef"


def test_semantic_search_is_off_unless_a_provider_is_named() -> None:
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s"})
    assert (settings.embedding_provider, settings.embedding_url, settings.embedding_api_key) == (
        None,
        None,
        None,
    )


def test_the_embedding_settings_are_read_and_the_key_kept_secret() -> None:
    settings = Settings.from_env(
        {
            "GITHUB_WEBHOOK_SECRET": "s",
            "EMBEDDING_PROVIDER": "OpenAI",
            "EMBEDDING_URL": "https://api.example.com/",
            "EMBEDDING_MODEL": "text-embedding-3-large",
            "EMBEDDING_API_KEY": EMBEDDING_KEY,
        }
    )
    assert (settings.embedding_provider, settings.embedding_url, settings.embedding_model) == (
        "openai",
        "https://api.example.com",
        "text-embedding-3-large",
    )
    assert EMBEDDING_KEY not in repr(settings)
    assert EMBEDDING_KEY in settings.secrets()


def test_the_embedding_key_may_come_from_its_ssm_name() -> None:
    env = {
        "GITHUB_WEBHOOK_SECRET": "s",
        "EMBEDDING_PROVIDER": "service",
        "EMBEDDING_URL": "https://embed.example.com",
        "EMBEDDING_API_KEY_PARAM": "/blog/embedding-key",
    }
    settings = Settings.from_env(env, lambda wanted: {"/blog/embedding-key": "from-ssm"})
    assert settings.embedding_api_key == "from-ssm"


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"EMBEDDING_PROVIDER": "word2vec"}, "EMBEDDING_PROVIDER must be one of service, bedrock, openai"),
        ({"EMBEDDING_PROVIDER": "service"}, "EMBEDDING_PROVIDER=service needs EMBEDDING_URL"),
        ({"EMBEDDING_PROVIDER": "openai"}, "EMBEDDING_PROVIDER=openai needs EMBEDDING_URL"),
        (
            {"EMBEDDING_PROVIDER": "service", "EMBEDDING_URL": "embed.example.com"},
            "EMBEDDING_URL must start with https:// or http://",
        ),
        (
            {
                "EMBEDDING_PROVIDER": "openai",
                "EMBEDDING_URL": "http://embed.example.com",
                "EMBEDDING_API_KEY": EMBEDDING_KEY,
            },
            "EMBEDDING_URL must start with https://",
        ),
    ],
    ids=["unknown provider", "service without URL", "openai without URL", "not a URL", "key in clear"],
)
def test_an_embedding_setting_that_cannot_work_refuses_the_start(env: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)) as refused:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", **env})
    assert EMBEDDING_KEY not in str(refused.value)


def test_bedrock_needs_no_url_and_a_local_stand_in_may_take_a_key_over_http() -> None:
    assert (
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "EMBEDDING_PROVIDER": "bedrock"}).embedding_url
        is None
    )
    local = {
        "EMBEDDING_PROVIDER": "service",
        "EMBEDDING_URL": "http://127.0.0.1:8080",
        "EMBEDDING_API_KEY": "k",
    }
    assert Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", **local}).embedding_url == "http://127.0.0.1:8080"
