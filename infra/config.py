"""The stack's settings, read once from ``pulumi.Config`` into a typed, validated object.

Every key the program reads is listed in ``KEYS`` (without the ``blog-api:`` namespace), so a test can
check that both committed stack files set each of them. ``artifactPath`` is the one exception: it is
given at deploy or CI time, never committed, because setting it switches packaging off.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Protocol

import pulumi

from shared import names

# Lambda runtimes this program accepts. The package is built for the same Python version (see
# infra.packaging), so the two are derived from one value.
SUPPORTED_RUNTIMES = ("python3.12", "python3.13")

# The key that switches packaging off; deliberately not in the committed stack files.
ARTIFACT_PATH_KEY = "artifactPath"

KEYS = (
    "physicalPrefix",
    "runtime",
    "memorySize",
    "timeout",
    "logLevel",
    "logRetentionDays",
    "githubAppId",
    "githubApiUrl",
    "articleBranch",
    "articlesDir",
    "webhookSecretParam",
    "githubAppPrivateKeyParam",
    "databaseUrlParam",
    "ssmKmsKeyArn",
    "httpsProxy",
    "noProxy",
    "vpcCidr",
    "availabilityZoneCount",
    "vpcId",
    "subnetIds",
    "securityGroupIds",
    "vpcEndpoints",
    "maximumEventAgeSeconds",
    "alarmActions",
    "scheduleEnabled",
    "scheduleExpression",
    "customDomainName",
    "customDomainCertificateArn",
)

_PREFIX_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_PARAM_RE = re.compile(r"^/?[A-Za-z0-9_.\-/]+$")


class ConfigSource(Protocol):
    """The part of ``pulumi.Config`` the program uses (tests pass a dictionary-backed fake)."""

    def get(self, key: str) -> str | None: ...
    def require(self, key: str) -> str: ...
    def get_int(self, key: str) -> int | None: ...
    def get_bool(self, key: str) -> bool | None: ...
    def get_object(self, key: str) -> Any: ...


class ConfigError(ValueError):
    """A stack setting is missing or invalid; the message names the key."""


@dataclass(frozen=True)
class NetworkSettings:
    """Where the function runs: a VPC this program creates, or an existing one."""

    vpc_cidr: str
    availability_zone_count: int
    existing_vpc_id: str | None
    existing_subnet_ids: tuple[str, ...]
    existing_security_group_ids: tuple[str, ...]
    vpc_endpoints: bool

    @property
    def uses_existing_vpc(self) -> bool:
        return self.existing_vpc_id is not None


@dataclass(frozen=True)
class StackConfig:
    """Everything the program reads from the stack's configuration, validated."""

    physical_prefix: str
    runtime: str
    memory_size: int
    timeout: int
    log_level: str
    log_retention_days: int
    github_app_id: str
    github_api_url: str
    article_branch: str | None
    articles_dir: str
    webhook_secret_param: str
    github_app_private_key_param: str
    database_url_param: str
    ssm_kms_key_arn: str | None
    https_proxy: str | None
    no_proxy: tuple[str, ...]
    network: NetworkSettings
    maximum_event_age_seconds: int
    alarm_actions: tuple[str, ...]
    schedule_enabled: bool
    schedule_expression: str
    custom_domain_name: str | None
    custom_domain_certificate_arn: str | None
    artifact_path: str | None

    @property
    def function_name(self) -> str:
        return names.function_name(self.physical_prefix)

    @property
    def python_version(self) -> str:
        """``python3.12`` → ``3.12``: the version the deployment package's wheels are built for."""
        return self.runtime.removeprefix("python")

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The SSM parameters the function reads, and the only ones its role may read."""
        return (self.webhook_secret_param, self.github_app_private_key_param, self.database_url_param)

    @classmethod
    def load(cls, config: ConfigSource | None = None) -> StackConfig:
        """Read and validate the ``blog-api:`` settings of the current stack."""
        cfg: ConfigSource = config if config is not None else pulumi.Config(names.PROJECT)
        prefix = cfg.require("physicalPrefix")
        if not _PREFIX_RE.match(prefix):
            raise ConfigError(f"blog-api:physicalPrefix {prefix!r} must match {_PREFIX_RE.pattern}")
        runtime = cfg.get("runtime") or "python3.12"
        if runtime not in SUPPORTED_RUNTIMES:
            raise ConfigError(f"blog-api:runtime must be one of {', '.join(SUPPORTED_RUNTIMES)}")

        network = NetworkSettings(
            vpc_cidr=_cidr(cfg.get("vpcCidr") or "10.20.0.0/16"),
            availability_zone_count=_int_in(cfg, "availabilityZoneCount", 2, 2, 6),
            existing_vpc_id=_optional(cfg, "vpcId"),
            existing_subnet_ids=_string_list(cfg, "subnetIds"),
            existing_security_group_ids=_string_list(cfg, "securityGroupIds"),
            vpc_endpoints=cfg.get_bool("vpcEndpoints") or False,
        )
        if network.uses_existing_vpc and len(network.existing_subnet_ids) < 2:
            raise ConfigError("blog-api:vpcId is set: blog-api:subnetIds needs subnets in at least two AZs")
        if not network.uses_existing_vpc and (
            network.existing_subnet_ids or network.existing_security_group_ids
        ):
            raise ConfigError("blog-api:subnetIds and blog-api:securityGroupIds need blog-api:vpcId")

        custom_domain = _optional(cfg, "customDomainName")
        certificate = _optional(cfg, "customDomainCertificateArn")
        if bool(custom_domain) != bool(certificate):
            raise ConfigError("blog-api:customDomainName and blog-api:customDomainCertificateArn go together")

        return cls(
            physical_prefix=prefix,
            runtime=runtime,
            memory_size=_int_in(cfg, "memorySize", 512, 128, 10240),
            # API Gateway answers after 30 s at most; the worker path runs asynchronously and may use
            # the rest of Lambda's 15 minutes.
            timeout=_int_in(cfg, "timeout", 300, 30, 900),
            log_level=(cfg.get("logLevel") or names.DEFAULT_LOG_LEVEL).upper(),
            log_retention_days=_int_in(cfg, "logRetentionDays", 14, 1, 3653),
            github_app_id=cfg.require("githubAppId"),
            github_api_url=cfg.get("githubApiUrl") or names.DEFAULT_GITHUB_API_URL,
            # Unset: the function follows the repository's default branch.
            article_branch=_optional(cfg, "articleBranch"),
            articles_dir=cfg.get("articlesDir") or names.DEFAULT_ARTICLES_DIR,
            webhook_secret_param=_parameter(cfg, "webhookSecretParam"),
            github_app_private_key_param=_parameter(cfg, "githubAppPrivateKeyParam"),
            database_url_param=_parameter(cfg, "databaseUrlParam"),
            ssm_kms_key_arn=_optional(cfg, "ssmKmsKeyArn"),
            https_proxy=_optional(cfg, "httpsProxy"),
            no_proxy=tuple(h.strip() for h in (cfg.get("noProxy") or "").split(",") if h.strip()),
            network=network,
            # Lambda accepts 60 s to 6 h for an asynchronous event's age.
            maximum_event_age_seconds=_int_in(cfg, "maximumEventAgeSeconds", 3600, 60, 21600),
            alarm_actions=_string_list(cfg, "alarmActions"),
            schedule_enabled=cfg.get_bool("scheduleEnabled") or False,
            schedule_expression=cfg.get("scheduleExpression") or "rate(1 hour)",
            custom_domain_name=custom_domain,
            custom_domain_certificate_arn=certificate,
            artifact_path=_optional(cfg, ARTIFACT_PATH_KEY),
        )


def _optional(cfg: ConfigSource, key: str) -> str | None:
    # An empty string in a stack file means "not set": it lets the committed files list every key.
    value = (cfg.get(key) or "").strip()
    return value or None


def _int_in(cfg: ConfigSource, key: str, default: int, low: int, high: int) -> int:
    value = cfg.get_int(key)
    value = default if value is None else value
    if not low <= value <= high:
        raise ConfigError(f"blog-api:{key} is {value}; it must be between {low} and {high}")
    return value


def _string_list(cfg: ConfigSource, key: str) -> tuple[str, ...]:
    value = cfg.get_object(key)
    if value is None or value == "":
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"blog-api:{key} must be a list of non-empty strings")
    return tuple(value)


def _parameter(cfg: ConfigSource, key: str) -> str:
    value = cfg.require(key)
    if value.startswith("arn:") or not _PARAM_RE.match(value):
        raise ConfigError(f"blog-api:{key} must be an SSM parameter name such as /d-st/blog-api/x")
    return value


def _cidr(value: str) -> str:
    try:
        network = ipaddress.ip_network(value)
    except ValueError as exc:
        raise ConfigError(f"blog-api:vpcCidr {value!r} is not a CIDR block") from exc
    if network.version != 4 or not 16 <= network.prefixlen <= 24:
        raise ConfigError("blog-api:vpcCidr must be an IPv4 block between /16 and /24")
    return str(network)
