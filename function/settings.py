"""Typed runtime settings, read once from the environment."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from function.errors import ConfigError
from function.store.url import parse_database_url
from shared import names

# Reads SSM parameters by name (SecureString decrypted) and returns {name: value}.
ParameterReader = Callable[[Sequence[str]], dict[str, str]]


_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# The read API's settings (only the function reads them; the Pulumi program need not know the names).
ENV_CORS_ALLOWED_ORIGINS = "CORS_ALLOWED_ORIGINS"
ENV_SITE_URL = "SITE_URL"
ENV_READ_CACHE_CONTROL = "READ_CACHE_CONTROL"
DEFAULT_READ_CACHE_CONTROL = "public, max-age=60, stale-while-revalidate=600"


@dataclass(frozen=True)
class Settings:
    """Everything the app and the worker read from their environment. Secrets are kept out of repr."""

    webhook_secret: str = field(repr=False)
    github_app_id: str | None = None
    github_private_key: str | None = field(default=None, repr=False)
    github_api_url: str = names.DEFAULT_GITHUB_API_URL
    database_url: str = field(default=names.DEFAULT_DATABASE_URL, repr=False)
    # "keep": a connection stays open across the jobs of one process (a warm Lambda environment);
    # "per-job": connect and close per job. None: keep on Lambda, per job elsewhere.
    database_connections: str | None = None
    article_source: str = names.DEFAULT_ARTICLE_SOURCE
    articles_dir: str = names.DEFAULT_ARTICLES_DIR
    article_branch: str | None = None
    # The zone of zone-less front matter times (published_at: 2024-01-21 09:00), an IANA name.
    article_timezone: str = names.DEFAULT_ARTICLE_TIMEZONE
    lambda_function_name: str | None = None
    # An alias (or version) of our own function for the self-invoke; None: the function itself.
    self_invoke_qualifier: str | None = None
    pass_through_path: str = names.DEFAULT_PASS_THROUGH_PATH
    https_proxy: str | None = None
    no_proxy: tuple[str, ...] = ()
    log_level: str = names.DEFAULT_LOG_LEVEL
    # Third-party loggers stay at INFO or above unless this asks for them (DEBUG to debug urllib3...).
    library_log_level: str | None = None
    allow_raw_html: bool = False
    # Base for repository images (/images/...): a CDN or a public repository's raw URL. None: left as is.
    asset_base_url: str | None = None
    # GitHub account login -> blog user name, for installation events whose login differs from the name.
    installation_user_map: Mapping[str, str] = field(default_factory=dict)
    # Browser origins that may call the read routes (exact "scheme://host[:port]"); empty: no CORS.
    cors_allowed_origins: tuple[str, ...] = ()
    # The blog's public URL: links in the feed and the sitemap (else the API's own URL).
    site_url: str | None = None
    read_cache_control: str = DEFAULT_READ_CACHE_CONTROL
    # The stack's alarm topic: told when a webhook endpoint is disabled (None: the log only).
    alarm_topic_arn: str | None = None
    # The CLI's database commands need no secret; the app and send-webhook do (fail closed).
    require_secret: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.require_secret and not self.webhook_secret:
            raise ConfigError(
                f"{names.ENV_WEBHOOK_SECRET} (or {names.ENV_WEBHOOK_SECRET_PARAM}) is not set: "
                "blog-api refuses to start without a webhook secret; set it to the GitHub App's webhook "
                "secret"
            )
        if self.article_source != "github" and not self.article_source.startswith("dir:"):
            raise ConfigError(f"{names.ENV_ARTICLE_SOURCE} must be 'github' or 'dir:PATH'")
        if not self.pass_through_path.startswith("/"):
            raise ConfigError(f"{names.ENV_PASS_THROUGH_PATH} must start with '/'")
        if self.database_connections not in (None, "keep", "per-job"):
            raise ConfigError(f"{names.ENV_DATABASE_CONNECTIONS} must be 'keep' or 'per-job'")
        if self.log_level not in _LOG_LEVELS:
            raise ConfigError(f"{names.ENV_LOG_LEVEL} must be one of {', '.join(_LOG_LEVELS)}")
        for origin in self.cors_allowed_origins:
            if origin == "*" or "://" not in origin or origin.endswith("/"):
                raise ConfigError(
                    f"{ENV_CORS_ALLOWED_ORIGINS} lists origins like 'https://blog.example.com' "
                    f"(no '*', no trailing '/'); got {origin!r}"
                )
        if self.site_url is not None and not self.site_url.startswith(("https://", "http://")):
            raise ConfigError(f"{ENV_SITE_URL} must start with https:// or http://")
        if self.alarm_topic_arn is not None and not self.alarm_topic_arn.startswith("arn:aws:sns:"):
            raise ConfigError(f"{names.ENV_ALARM_TOPIC_ARN} must be an SNS topic ARN (arn:aws:sns:...)")
        if self.github_app_id is not None and not self.github_app_id.isdigit():
            raise ConfigError(
                f"{names.ENV_GITHUB_APP_ID} must be the App's numeric id "
                "(the 'App ID' on the App's settings page, not its name or client id)"
            )
        if self.github_private_key is not None and not _looks_like_pem_key(self.github_private_key):
            raise ConfigError(
                f"{names.ENV_GITHUB_APP_PRIVATE_KEY} is not a PEM private key: use the whole .pem file "
                "GitHub generated, its -----BEGIN and -----END lines and line breaks included"
            )
        if not self.github_api_url.startswith(("https://", "http://")):
            raise ConfigError(f"{names.ENV_GITHUB_API_URL} must start with https://")
        if self.library_log_level is not None and self.library_log_level not in _LOG_LEVELS:
            raise ConfigError(f"{names.ENV_LIBRARY_LOG_LEVEL} must be one of {', '.join(_LOG_LEVELS)}")
        try:
            ZoneInfo(self.article_timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(
                f"{names.ENV_ARTICLE_TIMEZONE} must be an IANA time zone name such as Asia/Tokyo or UTC,"
                f" not {self.article_timezone!r}"
            ) from None
        # Refused now, naming the setting, rather than as a 500 on every request (and Lambda retrying
        # a configuration error until the dead-letter queue).
        parse_database_url(self.database_url)

    def check_source(self) -> None:
        """Raise ConfigError, naming what is missing, unless the article source can be built: the App's
        id and key for ``github`` (the key may come from its SSM name), an existing folder for ``dir:``."""
        folder = self.source_dir
        if folder is not None:
            if not folder or not os.path.isdir(folder):
                raise ConfigError(
                    f"{names.ENV_ARTICLE_SOURCE}=dir:{folder}: no such folder "
                    f"({os.path.abspath(folder or '.')})"
                )
            return
        missing = [
            name
            for name, value in (
                (names.ENV_GITHUB_APP_ID, self.github_app_id),
                (
                    f"{names.ENV_GITHUB_APP_PRIVATE_KEY} (or {names.ENV_GITHUB_APP_PRIVATE_KEY_PARAM})",
                    self.github_private_key,
                ),
            )
            if not value
        ]
        if missing:
            raise ConfigError(
                f"{' and '.join(missing)} not set: {names.ENV_ARTICLE_SOURCE}=github reads articles "
                "through the GitHub App; set them, or use ARTICLE_SOURCE=dir:PATH for a local folder"
            )

    @property
    def lambda_mode(self) -> bool:
        """True on Lambda (accept and self-invoke); False locally (process inside the request)."""
        return bool(self.lambda_function_name)

    @property
    def keeps_database_connection(self) -> bool:
        """True when a job's database connection stays open for the next job of this process."""
        if self.database_connections is None:
            return self.lambda_mode
        return self.database_connections == "keep"

    @property
    def source_dir(self) -> str | None:
        """The folder of ``ARTICLE_SOURCE=dir:PATH``, or None for GitHub."""
        return self.article_source[4:] if self.article_source.startswith("dir:") else None

    def secrets(self) -> list[str]:
        """Values that must never appear in a log line or a response."""
        values = [self.webhook_secret, self.github_private_key or ""]
        if self.github_private_key:
            # A PEM's body lines are secret on their own too.
            values += [line for line in self.github_private_key.splitlines() if len(line) > 20]
        password = _url_password(self.database_url)
        if password:
            values.append(password)
        return [v for v in values if v]

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        read_parameters: ParameterReader | None = None,
        *,
        require_secret: bool = True,
        require_source: bool = False,
    ) -> Settings:
        """Build settings from ``environ`` (default ``os.environ``).

        ``require_source``: the article source's settings must be complete too (``check_source``); the
        app starts with it, so a push never meets a half-configured source.

        ``*_PARAM`` variables name SSM SecureStrings; they are read in one batched call through
        ``read_parameters`` (default: botocore's SSM client), only when a plain value is not set.
        """
        env = dict(os.environ if environ is None else environ)
        wanted = {
            names.ENV_WEBHOOK_SECRET: names.ENV_WEBHOOK_SECRET_PARAM,
            names.ENV_GITHUB_APP_PRIVATE_KEY: names.ENV_GITHUB_APP_PRIVATE_KEY_PARAM,
            names.ENV_DATABASE_URL: names.ENV_DATABASE_URL_PARAM,
        }
        to_read = {var: env[param] for var, param in wanted.items() if not env.get(var) and env.get(param)}
        if not require_secret:
            to_read.pop(names.ENV_WEBHOOK_SECRET, None)
        if to_read:
            reader = read_parameters or ssm_parameter_reader(
                env.get(names.ENV_HTTPS_PROXY), _split(env.get(names.ENV_NO_PROXY) or "")
            )
            values = reader(sorted(set(to_read.values())))
            for var, param in to_read.items():
                if param not in values:
                    raise ConfigError(f"SSM parameter {param} (from {wanted[var]}) was not found")
                env[var] = values[param]

        settings = cls(
            webhook_secret=env.get(names.ENV_WEBHOOK_SECRET, ""),
            github_app_id=env.get(names.ENV_GITHUB_APP_ID) or None,
            github_private_key=env.get(names.ENV_GITHUB_APP_PRIVATE_KEY) or None,
            github_api_url=(env.get(names.ENV_GITHUB_API_URL) or names.DEFAULT_GITHUB_API_URL).rstrip("/"),
            database_url=env.get(names.ENV_DATABASE_URL) or names.DEFAULT_DATABASE_URL,
            database_connections=(env.get(names.ENV_DATABASE_CONNECTIONS) or "").lower() or None,
            article_source=env.get(names.ENV_ARTICLE_SOURCE) or names.DEFAULT_ARTICLE_SOURCE,
            articles_dir=(env.get(names.ENV_ARTICLES_DIR) or names.DEFAULT_ARTICLES_DIR).strip("/"),
            article_branch=env.get(names.ENV_ARTICLE_BRANCH) or None,
            article_timezone=(env.get(names.ENV_ARTICLE_TIMEZONE) or "").strip()
            or names.DEFAULT_ARTICLE_TIMEZONE,
            lambda_function_name=env.get(names.ENV_LAMBDA_FUNCTION_NAME) or None,
            self_invoke_qualifier=env.get(names.ENV_SELF_INVOKE_QUALIFIER) or None,
            pass_through_path=env.get(names.ENV_PASS_THROUGH_PATH) or names.DEFAULT_PASS_THROUGH_PATH,
            https_proxy=env.get(names.ENV_HTTPS_PROXY) or env.get("https_proxy") or None,
            no_proxy=_split(env.get(names.ENV_NO_PROXY) or env.get("no_proxy") or ""),
            log_level=(env.get(names.ENV_LOG_LEVEL) or names.DEFAULT_LOG_LEVEL).upper(),
            library_log_level=(env.get(names.ENV_LIBRARY_LOG_LEVEL) or "").upper() or None,
            allow_raw_html=(env.get(names.ENV_ALLOW_RAW_HTML, "").lower() in {"1", "true", "yes"}),
            asset_base_url=_asset_base_url(env.get(names.ENV_ASSET_BASE_URL, "")),
            installation_user_map=_parse_map(env.get(names.ENV_INSTALLATION_MAP, "")),
            cors_allowed_origins=_split(env.get(ENV_CORS_ALLOWED_ORIGINS) or ""),
            site_url=(env.get(ENV_SITE_URL) or "").rstrip("/") or None,
            read_cache_control=(env.get(ENV_READ_CACHE_CONTROL) or "").strip() or DEFAULT_READ_CACHE_CONTROL,
            alarm_topic_arn=(env.get(names.ENV_ALARM_TOPIC_ARN) or "").strip() or None,
            require_secret=require_secret,
        )
        if require_source:
            settings.check_source()
        return settings


def _looks_like_pem_key(text: str) -> bool:
    """A PEM private key block (RSA or PKCS#8) on several lines, as GitHub's download holds it (a key
    pasted into one line, with literal ``\\n``, is the usual mistake). Decoding it is left to the GitHub
    client, so settings import no cryptography."""
    stripped = text.strip()
    return stripped.startswith("-----BEGIN ") and stripped.endswith("PRIVATE KEY-----") and "\n" in stripped


def _asset_base_url(value: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if not value.lower().startswith(("https://", "http://")) or any(c in value for c in " \"'<>?#"):
        raise ConfigError(f"{names.ENV_ASSET_BASE_URL} must be an http(s) URL without query or fragment")
    return value.rstrip("/")


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _parse_map(value: str) -> dict[str, str]:
    """``login=user,login2=user2`` (or a JSON object) → mapping."""
    value = value.strip()
    if not value:
        return {}
    if value.startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise ConfigError(f"{names.ENV_INSTALLATION_MAP} is not valid JSON") from exc
        return {str(k): str(v) for k, v in parsed.items()}
    pairs = [p.split("=", 1) for p in _split(value)]
    if any(len(p) != 2 for p in pairs):
        raise ConfigError(f"{names.ENV_INSTALLATION_MAP} must look like 'login=user,login2=user2'")
    return {k.strip(): v.strip() for k, v in pairs}


def _url_password(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).password
    except ValueError:
        return None


def ssm_parameter_reader(https_proxy: str | None = None, no_proxy: Sequence[str] = ()) -> ParameterReader:
    """A ParameterReader on botocore's SSM client (built on first use; time-outs so start-up can't hang)."""

    def read(parameter_names: Sequence[str]) -> dict[str, str]:
        from function.aws import clients as aws_clients

        try:
            client = aws_clients.client(
                "ssm",
                connect_timeout=2,
                read_timeout=5,
                attempts=3,
                https_proxy=https_proxy,
                no_proxy=no_proxy,
            )
            answer = client.get_parameters(Names=list(parameter_names), WithDecryption=True)
        except Exception as exc:  # botocore's many errors (no credentials, no region, denied): one line
            raise ConfigError(
                f"cannot read the SSM parameters {', '.join(parameter_names)}: {type(exc).__name__}: "
                + str(exc).splitlines()[0][:300]
                + " (check AWS credentials, AWS_REGION and the parameters' names)"
            ) from exc
        return {p["Name"]: p["Value"] for p in answer.get("Parameters", [])}

    return read
