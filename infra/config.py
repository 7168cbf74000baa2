"""The stack's settings, read once from ``pulumi.Config`` into a typed, validated object.

Every key the program reads is listed in ``KEYS`` (without the ``blog-api:`` namespace), so a test can
check that both committed stack files set each of them. ``artifactPath`` is the one exception: it is
given at deploy or CI time, never committed, because setting it switches packaging off.

Validation happens before any resource is registered, and every problem is reported, one line each,
naming the key and the ``pulumi config set`` that fixes it. Values that only the person deploying
knows (the GitHub App id, the proxy, alarm e-mails) are refused while they still hold the examples the
documentation uses, so an example never reaches AWS.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import pulumi

from shared import names

# Lambda runtimes this program accepts. The package is built for the same Python version (see
# infra.packaging), so the two are derived from one value.
SUPPORTED_RUNTIMES = ("python3.12", "python3.13")

# The key that switches packaging off; deliberately not in the committed stack files.
ARTIFACT_PATH_KEY = "artifactPath"

# networkMode: "nat" creates a VPC whose private subnets route to the internet through NAT;
# "existing" adopts the VPC (and its routes to a proxy and the database) given by vpcId/subnetIds.
NETWORK_MODES = ("nat", "existing")
# natType: a managed NAT gateway, or a small EC2 instance doing NAT (a tenth of the price, one AZ,
# no managed failover: for dev).
NAT_TYPES = ("gateway", "instance")
# ssmKmsKey: "" (AWS's aws/ssm key), "create" (a key of this stack that only the function role and the
# deploy role may use), or the ARN of an existing customer managed key.
KMS_CREATE = "create"

KEYS = (
    "physicalPrefix",
    "runtime",
    "memorySize",
    "timeout",
    "logLevel",
    "logRetentionDays",
    "logGroupImport",
    "reservedConcurrency",
    "snapStart",
    "githubAppId",
    "githubAppIdParam",
    "githubApiUrl",
    "articleBranch",
    "articlesDir",
    "webhookSecretParam",
    "githubAppPrivateKeyParam",
    "databaseUrlParam",
    "ssmKmsKey",
    "deployRoleName",
    "httpsProxy",
    "noProxy",
    "networkMode",
    "natType",
    "natInstanceType",
    "vpcCidr",
    "availabilityZoneCount",
    "vpcId",
    "subnetIds",
    "securityGroupIds",
    "vpcEndpoints",
    "maximumEventAgeSeconds",
    "alarmEmails",
    "apiAccessLogRetentionDays",
    "scheduleEnabled",
    "scheduleExpression",
    "customDomainName",
    "customDomainCertificateArn",
    "apiThrottlingRateLimit",
    "apiThrottlingBurstLimit",
)

# Examples the documentation uses: a value still equal to one of them was copied, not chosen.
EXAMPLE_APP_IDS = frozenset({"123456", "654321"})
EXAMPLE_IDS = frozenset(
    {
        "vpc-0123456789abcdef0",
        "subnet-0aaaaaaaaaaaaaaaa",
        "subnet-0bbbbbbbbbbbbbbbb",
        "sg-0cccccccccccccccc",
    }
)
# Reserved for documentation (RFC 2606 / 6761): no real host ends in these.
_EXAMPLE_HOST = re.compile(r"(^|\.)(example|invalid|test|localhost)$|(^|\.)example\.(com|net|org)$")

_PREFIX_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_PARAM_RE = re.compile(r"^/?[A-Za-z0-9_.\-/]+$")
_APP_ID_RE = re.compile(r"^[1-9][0-9]{0,11}$")
_EMAIL_RE = re.compile(r"^[^@\s]+@([^@\s]+\.[^@\s]+)$")
_ROLE_NAME_RE = re.compile(r"^[\w+=,.@-]{1,64}$")
_KMS_ARN_RE = re.compile(r"^arn:aws[\w-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}$")
_RESOURCE_ID_RE = {
    "vpcId": re.compile(r"^vpc-[0-9a-f]{8,17}$"),
    "subnetIds": re.compile(r"^subnet-[0-9a-f]{8,17}$"),
    "securityGroupIds": re.compile(r"^sg-[0-9a-f]{8,17}$"),
}
# CloudWatch Logs accepts only these retention periods (days).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192,
                      2557, 2922, 3288, 3653)  # fmt: skip
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

T = TypeVar("T")


class ConfigSource(Protocol):
    """The part of ``pulumi.Config`` the program uses (tests pass a dictionary-backed fake)."""

    def get(self, key: str) -> str | None: ...
    def get_object(self, key: str) -> Any: ...


class ConfigError(ValueError):
    """One or more stack settings are missing or invalid; each line of the message names its key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class NetworkSettings:
    """Where the function runs and how it gets out: NAT in a VPC this program creates, or an existing VPC."""

    mode: str
    nat_type: str
    nat_instance_type: str
    vpc_cidr: str
    availability_zone_count: int
    existing_vpc_id: str | None
    existing_subnet_ids: tuple[str, ...]
    existing_security_group_ids: tuple[str, ...]
    vpc_endpoints: bool

    @property
    def uses_existing_vpc(self) -> bool:
        return self.mode == "existing"


@dataclass(frozen=True)
class StackConfig:
    """Everything the program reads from the stack's configuration, validated."""

    physical_prefix: str
    runtime: str
    memory_size: int
    timeout: int
    log_level: str
    log_retention_days: int
    log_group_import: bool
    reserved_concurrency: int | None
    snap_start: bool
    github_app_id: str | None
    github_app_id_param: str | None
    github_api_url: str
    article_branch: str | None
    articles_dir: str
    webhook_secret_param: str
    github_app_private_key_param: str
    database_url_param: str
    ssm_kms_key: str | None
    deploy_role_name: str | None
    https_proxy: str | None
    no_proxy: tuple[str, ...]
    network: NetworkSettings
    maximum_event_age_seconds: int
    alarm_emails: tuple[str, ...]
    api_access_log_retention_days: int
    schedule_enabled: bool
    schedule_expression: str
    custom_domain_name: str | None
    custom_domain_certificate_arn: str | None
    artifact_path: str | None
    # The HTTP API stage's throttle: a crawler gets 429s from API Gateway before it can take every
    # Lambda instance, and with them every database connection.
    api_throttling_rate_limit: int = 25  # requests per second, steady
    api_throttling_burst_limit: int = 50  # requests at once

    @property
    def function_name(self) -> str:
        return names.function_name(self.physical_prefix)

    @property
    def python_version(self) -> str:
        """``python3.12`` → ``3.12``: the version the deployment package is built and compiled for."""
        return self.runtime.removeprefix("python")

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The SSM parameters the function reads, and the only ones its role may read."""
        return (self.webhook_secret_param, self.github_app_private_key_param, self.database_url_param)

    @property
    def creates_kms_key(self) -> bool:
        return self.ssm_kms_key == KMS_CREATE

    @property
    def ssm_kms_key_arn(self) -> str | None:
        """An existing customer managed key's ARN (``None`` for aws/ssm, or for a key this stack creates)."""
        return None if self.ssm_kms_key in (None, KMS_CREATE) else self.ssm_kms_key

    @classmethod
    def load(cls, config: ConfigSource | None = None, *, stack: str | None = None) -> StackConfig:
        """Read and validate the stack's ``blog-api:`` settings; one ConfigError lists every problem."""
        cfg: ConfigSource = config if config is not None else pulumi.Config(names.PROJECT)
        r = _Reader(cfg, stack if stack is not None else _current_stack())

        prefix = r.text("physicalPrefix", "")
        r.check("physicalPrefix", bool(_PREFIX_RE.match(prefix)), f"must match {_PREFIX_RE.pattern}", "d-st")
        runtime = r.choice("runtime", SUPPORTED_RUNTIMES, "python3.12")

        network = cls._network(r)
        https_proxy = r.optional("httpsProxy")
        if https_proxy is not None:
            r.check_url("httpsProxy", https_proxy, ("http", "https"), "http://<your squid>:3128")
        no_proxy = tuple(h.strip() for h in (r.optional("noProxy") or "").split(",") if h.strip())
        for host in no_proxy:
            r.check("noProxy", not _is_example_host(host), f"{host!r} is an example host", "<host>,<host>")

        app_id, app_id_param = r.optional("githubAppId"), r.optional("githubAppIdParam")
        if app_id is not None:
            r.check("githubAppId", bool(_APP_ID_RE.match(app_id)), "must be the App's numeric id", "<App id>")
            r.check(
                "githubAppId", app_id not in EXAMPLE_APP_IDS, f"{app_id} is the documentation's example",
                "<your App id>",
            )  # fmt: skip
        elif app_id_param is not None:
            r.check_parameter("githubAppIdParam", app_id_param)
        else:
            r.problem(
                "githubAppIdParam", "is empty and so is githubAppId: the function needs the App id",
                "/<prefix>/blog-api/github-app-id",
            )  # fmt: skip

        github_api_url = r.text("githubApiUrl", names.DEFAULT_GITHUB_API_URL)
        r.check_url("githubApiUrl", github_api_url, ("https",), names.DEFAULT_GITHUB_API_URL)

        ssm_kms_key = r.optional("ssmKmsKey")
        if ssm_kms_key not in (None, KMS_CREATE):
            r.check(
                "ssmKmsKey", bool(_KMS_ARN_RE.match(ssm_kms_key or "")),
                f'must be empty, "{KMS_CREATE}" or a KMS key ARN', KMS_CREATE,
            )  # fmt: skip
        deploy_role = r.optional("deployRoleName")
        if ssm_kms_key == KMS_CREATE:
            r.check(
                "deployRoleName", deploy_role is not None and bool(_ROLE_NAME_RE.match(deploy_role)),
                "must name the IAM role that deploys this stack (it may use the parameters' key)",
                "<prefix>-blog-api-deploy",
            )  # fmt: skip

        alarm_emails = r.string_list("alarmEmails")
        for email in alarm_emails:
            match = _EMAIL_RE.match(email)
            r.check("alarmEmails", match is not None, f"{email!r} is not an e-mail address", '["you@…"]')
            if match is not None:
                r.check(
                    "alarmEmails", not _is_example_host(match.group(1)),
                    f"{email!r} is an example address", '["<you>@<your domain>"]',
                )  # fmt: skip

        custom_domain = r.optional("customDomainName")
        certificate = r.optional("customDomainCertificateArn")
        r.check(
            "customDomainCertificateArn", bool(custom_domain) == bool(certificate),
            "and customDomainName go together (set both or neither)", "arn:aws:acm:…",
        )  # fmt: skip
        if custom_domain is not None:
            r.check(
                "customDomainName", not _is_example_host(custom_domain), "is an example host",
                "<api.your-domain>",
            )  # fmt: skip

        reserved = r.optional("reservedConcurrency")
        reserved_concurrency: int | None = None
        if reserved is not None:
            reserved_concurrency = r.integer("reservedConcurrency", 0, 1, 1000)

        log_level = r.text("logLevel", names.DEFAULT_LOG_LEVEL).upper()
        r.check("logLevel", log_level in LOG_LEVELS, f"must be one of {', '.join(LOG_LEVELS)}", "INFO")

        values = dict(
            physical_prefix=prefix,
            runtime=runtime,
            memory_size=r.integer("memorySize", 512, 128, 10240),
            # API Gateway answers after 30 s at most; the worker path runs asynchronously and may use
            # the rest of Lambda's 15 minutes.
            timeout=r.integer("timeout", 300, 30, 900),
            log_level=log_level,
            log_retention_days=r.retention("logRetentionDays", 14),
            log_group_import=r.boolean("logGroupImport"),
            reserved_concurrency=reserved_concurrency,
            snap_start=r.boolean("snapStart"),
            github_app_id=app_id,
            github_app_id_param=None if app_id is not None else app_id_param,
            github_api_url=github_api_url,
            # Unset: the function follows the repository's default branch.
            article_branch=r.optional("articleBranch"),
            articles_dir=r.text("articlesDir", names.DEFAULT_ARTICLES_DIR),
            webhook_secret_param=r.parameter("webhookSecretParam"),
            github_app_private_key_param=r.parameter("githubAppPrivateKeyParam"),
            database_url_param=r.parameter("databaseUrlParam"),
            ssm_kms_key=ssm_kms_key,
            deploy_role_name=deploy_role,
            https_proxy=https_proxy,
            no_proxy=no_proxy,
            network=network,
            # Lambda accepts 60 s to 6 h for an asynchronous event's age.
            maximum_event_age_seconds=r.integer("maximumEventAgeSeconds", 3600, 60, 21600),
            alarm_emails=alarm_emails,
            api_access_log_retention_days=r.retention("apiAccessLogRetentionDays", 14),
            schedule_enabled=r.boolean("scheduleEnabled"),
            schedule_expression=r.text("scheduleExpression", "rate(1 hour)"),
            custom_domain_name=custom_domain,
            custom_domain_certificate_arn=certificate,
            artifact_path=r.optional(ARTIFACT_PATH_KEY),
            api_throttling_rate_limit=r.integer("apiThrottlingRateLimit", 25, 1, 10000),
            api_throttling_burst_limit=r.integer("apiThrottlingBurstLimit", 50, 1, 5000),
        )
        if r.problems:
            raise ConfigError(r.problems)
        return cls(**values)  # type: ignore[arg-type]

    @staticmethod
    def _network(r: _Reader) -> NetworkSettings:
        mode = r.choice("networkMode", NETWORK_MODES, "nat")
        vpc_id = r.optional("vpcId")
        subnets = r.string_list("subnetIds")
        groups = r.string_list("securityGroupIds")
        if mode == "existing":
            if vpc_id is None:
                r.problem("vpcId", "is empty; networkMode existing needs the VPC's id", "vpc-…")
            if len(subnets) < 2:
                r.problem("subnetIds", "needs subnets in at least two AZs (networkMode existing)",
                          '["subnet-…","subnet-…"]')  # fmt: skip
            for key, ids in (("vpcId", (vpc_id,) if vpc_id else ()), ("subnetIds", subnets),
                             ("securityGroupIds", groups)):  # fmt: skip
                for value in ids:
                    if value in EXAMPLE_IDS:
                        r.problem(key, f"{value} is the documentation's example", "<your id>")
                    elif not _RESOURCE_ID_RE[key].match(value):
                        r.problem(key, f"{value!r} is not an id of that kind", "<your id>")
        elif vpc_id or subnets or groups:
            # Silently ignoring them would deploy into a network nobody asked for.
            r.problem("networkMode", "is nat, but vpcId/subnetIds/securityGroupIds are set", "existing")
        return NetworkSettings(
            mode=mode,
            nat_type=r.choice("natType", NAT_TYPES, "gateway"),
            nat_instance_type=r.text("natInstanceType", "t4g.nano"),
            vpc_cidr=r.cidr("vpcCidr", "10.20.0.0/16"),
            availability_zone_count=r.integer("availabilityZoneCount", 2, 2, 6),
            existing_vpc_id=vpc_id if mode == "existing" else None,
            existing_subnet_ids=subnets if mode == "existing" else (),
            existing_security_group_ids=groups if mode == "existing" else (),
            vpc_endpoints=r.boolean("vpcEndpoints"),
        )


def _current_stack() -> str:
    try:
        return pulumi.get_stack()
    except Exception:  # noqa: BLE001 - outside a Pulumi run there is no stack; the message still helps
        return "<stack>"


def _is_example_host(host: str) -> bool:
    return bool(_EXAMPLE_HOST.search(host.strip().lower().rstrip(".")))


class _Reader:
    """Reads keys with defaults and collects every problem instead of stopping at the first."""

    def __init__(self, cfg: ConfigSource, stack: str) -> None:
        self.cfg = cfg
        self.stack = stack
        self.problems: list[str] = []

    def problem(self, key: str, why: str, example: str) -> None:
        fix = f"pulumi config set {names.PROJECT}:{key} '{example}' --stack {self.stack}"
        self.problems.append(f"{names.PROJECT}:{key} {why}; fix: {fix}")

    def check(self, key: str, ok: bool, why: str, example: str) -> None:
        if not ok:
            self.problem(key, why, example)

    def optional(self, key: str) -> str | None:
        # An empty string in a stack file means "not set": it lets the committed files list every key.
        value = (self.cfg.get(key) or "").strip()
        return value or None

    def text(self, key: str, default: str) -> str:
        return self.optional(key) or default

    def choice(self, key: str, allowed: tuple[str, ...], default: str) -> str:
        value = self.text(key, default)
        self.check(key, value in allowed, f"is {value!r}; it must be one of {', '.join(allowed)}", allowed[0])
        return value

    def boolean(self, key: str) -> bool:
        value = (self.optional(key) or "false").lower()
        self.check(key, value in ("true", "false"), f"is {value!r}; it must be true or false", "false")
        return value == "true"

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        return self._parsed(key, default, int, lambda v: low <= v <= high, f"between {low} and {high}")

    def retention(self, key: str, default: int) -> int:
        allowed = ", ".join(map(str, LOG_RETENTION_DAYS))
        return self._parsed(key, default, int, lambda v: v in LOG_RETENTION_DAYS, f"one of {allowed}")

    def _parsed(
        self, key: str, default: T, parse: Callable[[str], T], ok: Callable[[T], bool], rule: str
    ) -> T:
        raw = self.optional(key)
        if raw is None:
            return default
        try:
            value = parse(raw)
        except ValueError:
            self.problem(key, f"is {raw!r}; it must be {rule}", str(default))
            return default
        self.check(key, ok(value), f"is {value}; it must be {rule}", str(default))
        return value

    def string_list(self, key: str) -> tuple[str, ...]:
        value = self.cfg.get_object(key)
        if value is None or value == "":
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.problem(key, "must be a list of non-empty strings", '["…"]')
            return ()
        return tuple(value)

    def parameter(self, key: str) -> str:
        value = self.optional(key) or ""
        self.check_parameter(key, value)
        return value

    def check_parameter(self, key: str, value: str) -> None:
        self.check(
            key, not value.startswith("arn:") and bool(_PARAM_RE.match(value)),
            "must be an SSM parameter name such as /d-st/blog-api/x", "/<prefix>/blog-api/<name>",
        )  # fmt: skip

    def check_url(self, key: str, value: str, schemes: tuple[str, ...], example: str) -> None:
        parts = urlsplit(value)
        if parts.scheme not in schemes or not parts.hostname:
            self.problem(key, f"{value!r} is not a {'/'.join(schemes)} URL", example)
        elif _is_example_host(parts.hostname):
            self.problem(key, f"{parts.hostname} is an example host", example)

    def cidr(self, key: str, default: str) -> str:
        value = self.text(key, default)
        try:
            network = ipaddress.ip_network(value)
        except ValueError:
            self.problem(key, f"{value!r} is not a CIDR block", default)
            return default
        self.check(
            key, network.version == 4 and 16 <= network.prefixlen <= 24,
            "must be an IPv4 block between /16 and /24", default,
        )  # fmt: skip
        return str(network)
