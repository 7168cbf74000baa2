"""Typed runtime settings, read once from the environment and checked, as ``shared.runtime_settings``
declares them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Self
from urllib.parse import unquote

from function.errors import ConfigError
from function.store.url import DatabaseTarget, parse_database_url
from shared.runtime_settings import (
    RuntimeSettings,
    credential_url_problem,
    declaration,
    split_list,
    variable,
)
from shared.setting import Setting, SettingProblem, declared_settings, settings_of

# A webhook secret shorter than this is refused on Lambda (``openssl rand -hex 32`` makes 64).
MIN_SECRET_CHARS = 32

# Reads SSM parameters by name (SecureString decrypted) and returns {name: value}.
ParameterReader = Callable[[Sequence[str]], dict[str, str]]


@declared_settings
class Settings(RuntimeSettings):
    """Everything the app and the worker read from their environment. Secrets are kept out of repr."""

    # The CLI's database commands need no secret; the app and send-webhook do (fail closed).
    require_secret: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        for spec in settings_of(type(self)):
            value = getattr(self, spec.attribute)
            if spec.required is not None and self.require_secret and not value:
                also = f" (or {spec.param.env})" if spec.param is not None else ""
                raise ConfigError(f"{spec.env}{also} is not set: {spec.required}")
            problem = None if value is None or spec.check is None else spec.check(value)
            if problem is not None:
                raise ConfigError(f"{spec.env} {problem}")
        # Refused now, naming the setting, rather than as a 500 on every request (and Lambda retrying
        # a configuration error until the dead-letter queue). The store's parser knows the URL's rules.
        target = parse_database_url(self.database_url)
        self._check_cloudinary()
        self._check_embeddings()
        if self.lambda_mode:
            self._check_deployed(target)

    def _check_cloudinary(self) -> None:
        """The Cloudinary share images need all three settings; some without the others is a mistake
        better reported now than as share images that silently fall back to the default."""
        parts = {
            variable("cloudinary_cloud_name"): self.cloudinary_cloud_name,
            variable("cloudinary_ogp_public_id"): self.cloudinary_ogp_public_id,
            variable("cloudinary_api_secret"): self.cloudinary_api_secret,
        }
        missing = [name for name, value in parts.items() if not value]
        if missing and len(missing) < len(parts):
            raise ConfigError(
                f"{' and '.join(missing)} not set: the Cloudinary share images need "
                f"{', '.join(parts)} together (or none of them)"
            )

    def _check_embeddings(self) -> None:
        """An HTTP embedding provider needs its URL, and a key is sent only over TLS (or to this machine):
        reported now rather than as every sync's vectors failing."""
        provider = self.embedding_provider
        url_name = variable("embedding_url")
        if provider in ("service", "openai") and not self.embedding_url:
            raise ConfigError(
                f"{variable('embedding_provider')}={provider} needs {url_name}: the embedding service's "
                "base URL"
            )
        if self.embedding_api_key and self.embedding_url:
            problem = credential_url_problem(self.embedding_url)
            if problem is not None:
                raise ConfigError(f"{url_name} {problem} (it is sent {variable('embedding_api_key')})")

    def _check_deployed(self, target: DatabaseTarget) -> None:
        """What a deployed function refuses that a laptop may do: a guessable webhook secret (it signs
        every delivery and envelope), and a database password and data crossing a network in clear."""
        secret = variable("webhook_secret")
        if self.require_secret and len(self.webhook_secret) < MIN_SECRET_CHARS:
            raise ConfigError(
                f"{secret} is shorter than {MIN_SECRET_CHARS} characters, so it can be guessed: "
                f"make one with `openssl rand -hex 32` and set it on the GitHub App and here"
            )
        if not target.is_loopback and not target.uses_tls and not self.database_allow_plaintext:
            raise ConfigError(
                f"{variable('database_url')} connects to {target.params.get('host')} without TLS: add "
                "?ssl_ca=<CA bundle> (the certificate and host name are then verified), or set "
                f"{variable('database_allow_plaintext')}=true if the network is private and trusted"
            )

    def check_source(self) -> None:
        """Raise ConfigError, naming what is missing, unless the article source can be built: the App's
        id and key for ``github`` (the key may come from its SSM name), an existing folder for ``dir:``."""
        source = variable("article_source")
        folder = self.source_dir
        if folder is not None:
            if not folder or not os.path.isdir(folder):
                raise ConfigError(f"{source}=dir:{folder}: no such folder ({os.path.abspath(folder or '.')})")
            return
        key = declaration("github_private_key")
        key_names = f"{key.env} (or {key.param.env})" if key.param is not None else key.env
        missing = [
            name
            for name, value in (
                (variable("github_app_id"), self.github_app_id),
                (key_names, self.github_private_key),
            )
            if not value
        ]
        if missing:
            raise ConfigError(
                f"{' and '.join(missing)} not set: {source}=github reads articles "
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
        values += database_url_secrets(self.database_url)
        values.append(self.cloudinary_api_secret or "")
        values.append(self.embedding_api_key or "")
        return [v for v in values if v]

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        read_parameters: ParameterReader | None = None,
        *,
        require_secret: bool = True,
        require_source: bool = False,
    ) -> Self:
        """Build settings from ``environ`` (default ``os.environ``).

        ``require_source``: the article source's settings must be complete too (``check_source``); the
        app starts with it, so a push never meets a half-configured source.

        ``*_PARAM`` variables name SSM SecureStrings; they are read in one batched call through
        ``read_parameters`` (default: botocore's SSM client), only when a plain value is not set.
        """
        env = dict(os.environ if environ is None else environ)
        declared = settings_of(cls)
        _read_parameters(env, declared, read_parameters, require_secret=require_secret)
        values = {spec.attribute: _value(spec, env) for spec in declared}
        settings = cls(**values, require_secret=require_secret)
        if require_source:
            settings.check_source()
        return settings


def _value(spec: Setting[Any], env: Mapping[str, str]) -> Any:
    """The setting's value from ``env``: its default when unset or empty, else its parsed text."""
    raw = env.get(spec.env) or next((env[other] for other in spec.also if env.get(other)), "")
    if spec.strip:
        raw = raw.strip()
    if not raw:
        return spec.default_value()
    try:
        value = spec.parse(raw)
    except SettingProblem as problem:
        raise ConfigError(f"{spec.env} {problem}") from None
    return spec.default_value() if value is None else value


def _read_parameters(
    env: dict[str, str],
    declared: Sequence[Setting[Any]],
    read_parameters: ParameterReader | None,
    *,
    require_secret: bool,
) -> None:
    """Put the value of each ``*_PARAM`` SSM parameter into ``env`` where the plain variable is unset."""
    wanted = {
        spec.env: spec.param.env
        for spec in declared
        if spec.param is not None and (require_secret or spec.required is None)
    }
    to_read = {var: env[param] for var, param in wanted.items() if not env.get(var) and env.get(param)}
    if not to_read:
        return
    reader = read_parameters or ssm_parameter_reader(
        env.get(variable("https_proxy")), split_list(env.get(variable("no_proxy")) or "")
    )
    values = reader(sorted(set(to_read.values())))
    for var, param in to_read.items():
        if param not in values:
            raise ConfigError(f"SSM parameter {param} (from {wanted[var]}) was not found")
        env[var] = values[param]


def database_url_secrets(url: str) -> list[str]:
    """The password of a database URL as written and URL-decoded (a message can quote either), found
    even when it holds an unencoded "/" (which defeats ``urlsplit``), and a TLS key's password."""
    _, separator, rest = url.partition("://")
    found: list[str] = []
    if separator:
        authority = rest.rpartition("@")[0]
        password = authority.partition(":")[2]
        if password:
            found += [password, unquote(password)]
    query = url.partition("?")[2]
    found += [
        unquote(v) for k, v in (p.partition("=")[::2] for p in query.split("&")) if k == "ssl_key_password"
    ]
    return [value for value in found if value]


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
