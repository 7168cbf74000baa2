"""The stack's settings, read once from ``pulumi.Config`` into a typed, validated object.

Each key is declared once below, as a field of ``StackConfig`` (or of its ``network`` group): its name
(without the ``blog-api:`` namespace), reader, default, check and doc line. ``KEYS`` lists the names,
so a test can check that both committed stack files set each of them; ``artifactPath`` is the one
exception: it is given at deploy or CI time, never committed, because setting it switches packaging off.

Validation happens before any resource is registered, and every problem is reported, one line each,
naming the key and the ``pulumi config set`` that fixes it, in the order the keys are declared. Values
that only the person deploying knows (the GitHub App id, the proxy, alarm e-mails) are refused while they
still hold the examples the documentation uses, so an example never reaches AWS.
"""

from __future__ import annotations

from typing import Any, Self

import pulumi

from infra import stack_checks as checks
from infra.network_settings import NetworkSettings
from infra.stack_checks import KMS_CREATE, LOG_RETENTION_DAYS
from infra.stack_keys import (
    ConfigSource,
    boolean,
    choice,
    comma_list,
    group,
    integer,
    key,
    keys_of,
    one_of_numbers,
    optional,
    optional_integer,
    read_keys,
    stack_settings,
    string_list,
    text,
    upper_text,
)
from shared import names
from shared.runtime_settings import BEDROCK_EMBEDDING_MODEL, declaration

__all__ = ["KMS_CREATE", "LOG_RETENTION_DAYS", "ConfigSource", "NetworkSettings"]

# Lambda runtimes this program accepts. The package is built for the same Python version (see
# infra.packaging), so the two are derived from one value.
SUPPORTED_RUNTIMES = ("python3.12", "python3.13")

# The key that switches packaging off; deliberately not in the committed stack files.
ARTIFACT_PATH_KEY = "artifactPath"


class ConfigError(ValueError):
    """One or more stack settings are missing or invalid; each line of the message names its key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@stack_settings
class StackConfig:
    """Everything the program reads from the stack's configuration, validated."""

    physical_prefix: str = key(
        "physicalPrefix",
        text,
        default="",
        doc="starts every physical name; the function is `<prefix>-blog-api`",
        check=checks.physical_prefix,
    )
    runtime: str = key(
        "runtime",
        choice(SUPPORTED_RUNTIMES),
        default="python3.12",
        doc="`python3.12` or `python3.13`; the package is built and compiled for the same version",
    )
    network: NetworkSettings = group(NetworkSettings)
    https_proxy: str | None = key(
        "httpsProxy",
        optional,
        default=None,
        doc="optional in both network modes (for example the squid of an existing VPC)",
        check=checks.proxy_url,
    )
    no_proxy: tuple[str, ...] = key(
        "noProxy",
        comma_list,
        default=(),
        doc="comma separated. With `vpcEndpoints` on, the Lambda and SSM host names are added",
        check=checks.no_example_hosts,
    )
    github_app_id: str | None = key(
        "githubAppId",
        optional,
        default=None,
        doc="your GitHub App's id; set, it wins over `githubAppIdParam`",
        check=checks.app_id,
    )
    github_app_id_param: str | None = key(
        "githubAppIdParam",
        optional,
        default=None,
        doc="SSM String parameter holding the App id, read at deploy time",
        check=checks.app_id_param,
        applies=lambda k: k.text_of("githubAppId") is None,
    )
    github_api_url: str = key(
        "githubApiUrl",
        text,
        default=declaration("github_api_url").default,
        doc="GitHub's REST base URL",
        check=checks.github_api_url,
    )
    ssm_kms_key: str | None = key(
        "ssmKmsKey",
        optional,
        default=None,
        doc="the parameters' key: `\"\"` AWS's `aws/ssm`; `create` a key of this stack; or a key ARN (the "
        "role gets `kms:Decrypt` on it through SSM)",
        check=checks.kms_key,
    )
    operator_role_name: str | None = key(
        "operatorRoleName",
        optional,
        default=None,
        doc="with `create`: the IAM role people assume to write the parameters' values, the only "
        "principal besides the function role that may use the key (`infra/bootstrap` creates it)",
        check=checks.operator_role,
    )
    alarm_emails: tuple[str, ...] = key(
        "alarmEmails",
        string_list,
        default=(),
        doc="addresses subscribed to the alarm topic (each confirms once)",
        check=checks.alarm_emails,
    )
    # Before the name: the name's check reports a missing certificate first, as it reads both.
    custom_domain_certificate_arn: str | None = key(
        "customDomainCertificateArn",
        optional,
        default=None,
        doc="ACM certificate for `customDomainName`, **in the same region**",
    )
    custom_domain_name: str | None = key(
        "customDomainName",
        optional,
        default=None,
        doc="for example `blog-api.<your domain>` (set both or neither)",
        check=checks.custom_domain,
    )
    reserved_concurrency: int | None = key(
        "reservedConcurrency",
        optional_integer(1, 1000),
        default=None,
        doc="a number: concurrency reserved for the function, and its cap (and so of its database "
        "connections: one per execution environment); empty: the account's shared pool",
    )
    log_level: str = key(
        "logLevel",
        upper_text,
        default=declaration("log_level").default,
        doc="level of the function's own log lines",
        check=checks.log_level,
    )
    # 3,008 MB: a first sync's cost is about the same at any size from one vCPU up (CPU-bound work is
    # billed by GB-second and more memory buys as much more CPU), and the render processes make it
    # faster; a push or a read waits on the network and costs in proportion, a fraction of a cent a
    # thousand. docs/performance.md models the first sync at 1,769 / 3,008 / 5,307 MB from a run.
    memory_size: int = key(
        "memorySize",
        integer(128, 10240),
        default=3008,
        doc="MB; Lambda gives one vCPU per 1,769 MB, which the first sync's render processes use "
        "(time and cost per 1,000 articles at each size: docs/performance.md). New AWS accounts start "
        "with a reduced memory quota: if a deploy is refused, lower this or raise the quota",
    )
    # API Gateway answers after 30 s at most; the worker path runs asynchronously and may use the rest
    # of Lambda's 15 minutes.
    timeout: int = key(
        "timeout",
        integer(30, 900),
        default=300,
        doc="seconds (30–900). The HTTP API gives up after 30 s anyway; the worker runs asynchronously",
    )
    log_retention_days: int = key(
        "logRetentionDays",
        one_of_numbers(LOG_RETENTION_DAYS),
        default=14,
        doc="retention of `/aws/lambda/<prefix>-blog-api` (a CloudWatch Logs value: 1, 3, 5, 7, 14, 30, 60, "
        "90, …)",
    )
    log_group_import: bool = key(
        "logGroupImport",
        boolean,
        default=False,
        doc="`true` once, to adopt an existing `/aws/lambda/<prefix>-blog-api` (see *Moving from the CDK "
        "stack*)",
    )
    snap_start: bool = key(
        "snapStart",
        boolean,
        default=False,
        doc="SnapStart: published versions behind the alias `live` (see below)",
    )
    # Unset: the function follows the repository's default branch.
    article_branch: str | None = key(
        "articleBranch",
        optional,
        default=None,
        doc="the branch whose pushes are synced; empty: the repository's default branch",
    )
    articles_dir: str = key(
        "articlesDir",
        text,
        default=declaration("articles_dir").default,
        doc="folder of the repository that holds the articles",
    )
    site_url: str | None = key(
        "siteUrl",
        optional,
        default=None,
        doc="the blog's public URL (`https://…`): links in the feed and sitemap; empty: both answer 404",
        check=checks.site_url,
    )
    cors_allowed_origins: str | None = key(
        "corsAllowedOrigins",
        optional,
        default=None,
        doc="comma-separated origins (`https://blog.example.com`) whose pages may call the read routes, or "
        "`*` for any page; empty: no CORS",
        check=checks.cors_allowed_origins,
    )
    # The share image (ogpUrl) of an article without a thumbnail: a template, a signed Cloudinary card
    # (its secret only as an SSM parameter), or one default image.
    ogp_image_url_template: str | None = key(
        "ogpImageUrlTemplate",
        optional,
        default=None,
        doc="share image of an article without a thumbnail: a URL with `{title}`, `{slug}`, `{user}`; "
        "empty: a Cloudinary card or the default image",
        check=checks.ogp_image_url_template,
    )
    cloudinary_cloud_name: str | None = key(
        "cloudinaryCloudName",
        optional,
        default=None,
        doc="Cloudinary cloud that draws the title on `cloudinaryOgpPublicId` as the share image; empty: "
        "none",
        check=checks.cloudinary_name,
    )
    cloudinary_ogp_public_id: str | None = key(
        "cloudinaryOgpPublicId",
        optional,
        default=None,
        doc="public id of that base image",
        check=checks.cloudinary_name,
    )
    cloudinary_api_secret_param: str | None = key(
        "cloudinaryApiSecretParam",
        optional,
        default=None,
        doc="SSM SecureString holding the Cloudinary API secret that signs the cards; the three "
        "`cloudinary*` keys go together",
        check=checks.cloudinary_api_secret_param,
    )
    ogp_default_image_url: str | None = key(
        "ogpDefaultImageUrl",
        optional,
        default=None,
        doc='share image when neither the template nor Cloudinary makes one; empty: `ogpUrl` is `""`',
        check=checks.ogp_default_image_url,
    )
    # Semantic search: the embedding provider (its key only as an SSM parameter); empty: lexical only.
    embedding_provider: str | None = key(
        "embeddingProvider",
        optional,
        default=None,
        doc="`service`, `bedrock` or `openai`: turns semantic search on; with `bedrock` the function's role "
        "may invoke `embeddingModel` (Titan Text Embeddings V2 by default); empty: lexical search only",
        check=checks.embedding_provider,
    )
    embedding_url: str | None = key(
        "embeddingUrl",
        optional,
        default=None,
        doc="base URL of the embedding service or OpenAI-compatible endpoint (`service`, `openai`)",
        check=checks.embedding_url,
    )
    embedding_model: str | None = key(
        "embeddingModel",
        optional,
        default=None,
        doc="model id asked for; empty: the provider's default",
        check=checks.embedding_model,
    )
    embedding_api_key_param: str | None = key(
        "embeddingApiKeyParam",
        optional,
        default=None,
        doc="SSM SecureString holding the key sent to the embedding service or endpoint; empty: none",
        check=checks.optional_parameter_name,
    )
    webhook_secret_param: str = key(
        "webhookSecretParam",
        text,
        default="",
        doc="SSM SecureString holding the webhook secret",
        check=checks.parameter_name,
    )
    github_app_private_key_param: str = key(
        "githubAppPrivateKeyParam",
        text,
        default="",
        doc="SSM SecureString holding the App's PEM key",
        check=checks.parameter_name,
    )
    database_url_param: str = key(
        "databaseUrlParam",
        text,
        default="",
        doc="SSM SecureString holding the database URL",
        check=checks.parameter_name,
    )
    # Lambda accepts 60 s to 6 h for an asynchronous event's age.
    maximum_event_age_seconds: int = key(
        "maximumEventAgeSeconds",
        integer(60, 21600),
        default=3600,
        doc="how long Lambda keeps retrying an asynchronous event (60–21600)",
    )
    api_access_log_retention_days: int = key(
        "apiAccessLogRetentionDays",
        one_of_numbers(LOG_RETENTION_DAYS),
        default=14,
        doc="retention of the HTTP API's access logs",
    )
    schedule_enabled: bool = key(
        "scheduleEnabled", boolean, default=False, doc="turns on the EventBridge schedule"
    )
    schedule_expression: str = key(
        "scheduleExpression", text, default="rate(1 hour)", doc="its EventBridge schedule expression"
    )
    artifact_path: str | None = key(
        ARTIFACT_PATH_KEY,
        optional,
        default=None,
        doc="a prebuilt zip: deploy it as it is and build nothing",
        committed=False,
    )
    # The HTTP API stage's throttle: a crawler gets 429s from API Gateway before it can take every
    # Lambda instance, and with them every database connection.
    api_throttling_rate_limit: int = key(
        "apiThrottlingRateLimit",
        integer(1, 10000),
        default=25,
        doc="requests per second the HTTP API stage lets through, steady (over it: 429 from API Gateway)",
    )
    api_throttling_burst_limit: int = key(
        "apiThrottlingBurstLimit",
        integer(1, 5000),
        default=50,
        doc="requests the stage lets through at once",
    )

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
        optional = (self.cloudinary_api_secret_param, self.embedding_api_key_param)
        required = (self.webhook_secret_param, self.github_app_private_key_param, self.database_url_param)
        return required + tuple(name for name in optional if name)

    @property
    def bedrock_models(self) -> tuple[str, ...]:
        """The Bedrock models the function invokes for semantic search (none unless the provider is
        ``bedrock``): the only ones its role may invoke."""
        if self.embedding_provider != "bedrock":
            return ()
        return (self.embedding_model or BEDROCK_EMBEDDING_MODEL,)

    @property
    def creates_kms_key(self) -> bool:
        return self.ssm_kms_key == KMS_CREATE

    @property
    def ssm_kms_key_arn(self) -> str | None:
        """An existing customer managed key's ARN (``None`` for aws/ssm, or for a key this stack creates)."""
        return None if self.ssm_kms_key in (None, KMS_CREATE) else self.ssm_kms_key

    def value_of(self, name: str) -> Any:
        """The value read for the key ``name`` (``logLevel``, ``vpcId``...); KeyError for an unknown key."""
        for path, spec in keys_of(type(self)):
            if spec.name == name:
                value: Any = self
                for attribute in path:
                    value = getattr(value, attribute)
                return value
        raise KeyError(name)

    @classmethod
    def load(cls, config: ConfigSource | None = None, *, stack: str | None = None) -> Self:
        """Read and validate the stack's ``blog-api:`` settings; one ConfigError lists every problem."""
        cfg: ConfigSource = config if config is not None else pulumi.Config(names.PROJECT)
        problems: list[str] = []
        values = read_keys(cls, cfg, stack if stack is not None else _current_stack(), problems)
        if problems:
            raise ConfigError(problems)
        return cls(**values)


# Every key the committed stack files set, in the order they are read.
KEYS = tuple(spec.name for _, spec in keys_of(StackConfig) if spec.committed)


def _current_stack() -> str:
    try:
        return pulumi.get_stack()
    except Exception:  # noqa: BLE001 - outside a Pulumi run there is no stack; the message still helps
        return "<stack>"
