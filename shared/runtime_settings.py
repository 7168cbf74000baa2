"""Every setting of the function, declared once: variable, type, default, check, doc line, stack key.

Adding a setting means adding one field here. ``function.settings.Settings`` reads and checks it from the
environment, ``docs/configuration.md``'s table lists it (``make docs``), and when it names a ``stack_key``
(or an ``on_lambda`` value) the Pulumi program sets it on the function. The stack key itself is declared
with the stack's settings, in ``infra/config.py``.

Checks here are standard library only; the one that needs the store's URL parser (``DATABASE_URL``) is
made by ``function.settings``, which can import it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

from shared.setting import Check, Param, Setting, SettingProblem, declared_settings, setting, settings_of

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_TRUE_WORDS = {"1", "true", "yes"}


def _text(value: str) -> str:
    return value


def _upper(value: str) -> str:
    return value.upper()


def _lower(value: str) -> str:
    return value.lower()


def _flag(value: str) -> bool:
    return value.lower() in _TRUE_WORDS


def split_list(value: str) -> tuple[str, ...]:
    """``a, b,,c`` → ``("a", "b", "c")``."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _without_trailing_slash(value: str) -> str | None:
    return value.rstrip("/") or None


def _asset_base_url(value: str) -> str:
    if not value.lower().startswith(("https://", "http://")) or any(c in value for c in " \"'<>?#"):
        raise SettingProblem("must be an http(s) URL without query or fragment")
    return value.rstrip("/")


def _user_map(value: str) -> dict[str, str]:
    """``login=user,login2=user2`` (or a JSON object) → mapping."""
    if value.startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            raise SettingProblem("is not valid JSON") from None
        return {str(k): str(v) for k, v in parsed.items()}
    pairs = [p.split("=", 1) for p in split_list(value)]
    if any(len(p) != 2 for p in pairs):
        raise SettingProblem("must look like 'login=user,login2=user2'")
    return {k.strip(): v.strip() for k, v in pairs}


def _one_of(allowed: tuple[str, ...]) -> Check[str]:
    def check(value: str) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(allowed)}"

    return check


def _article_source(value: str) -> str | None:
    return None if value == "github" or value.startswith("dir:") else "must be 'github' or 'dir:PATH'"


def _render_processes(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 64:
        raise SettingProblem("must be a whole number from 1 to 64")
    return int(value)


def _fraction(value: str) -> float:
    try:
        parsed = float(value)
    except ValueError:
        raise SettingProblem("must be a number between 0 and 1, e.g. 0.5") from None
    if not 0 < parsed <= 1:
        raise SettingProblem("must be a number between 0 and 1, e.g. 0.5 (1: never hold a sync)")
    return parsed


def _connections(value: str) -> str | None:
    return None if value in ("keep", "per-job") else "must be 'keep' or 'per-job'"


def _absolute_path(value: str) -> str | None:
    return None if value.startswith("/") else "must start with '/'"


# EMBEDDING_PROVIDER's values: the original's HTTP protocol, Amazon Bedrock, an OpenAI-compatible API.
EMBEDDING_PROVIDERS = ("service", "bedrock", "openai")
# Bedrock's model when EMBEDDING_MODEL is unset: the function invokes it, and the stack's role may.
BEDROCK_EMBEDDING_MODEL = "amazon.titan-embed-text-v2:0"

# CORS_ALLOWED_ORIGINS=*: any page may read the public read routes (never with credentials).
ANY_ORIGIN = "*"


def _origins(value: tuple[str, ...]) -> str | None:
    if ANY_ORIGIN in value:
        return None if value == (ANY_ORIGIN,) else "is either '*' alone or a list of origins, not both"
    for origin in value:
        if "://" not in origin or origin.endswith("/"):
            return (
                f"lists origins like 'https://blog.example.com' (no trailing '/'), or is '*'; got {origin!r}"
            )
    return None


OGP_TEMPLATE_FIELDS = ("title", "slug", "user")


def ogp_template_problem(template: str) -> str | None:
    """Why ``template`` cannot make share-image URLs, or None: an http(s) URL whose only ``{fields}`` are
    ``{title}``, ``{slug}`` and ``{user}`` (a literal brace is written twice, ``{{``)."""
    from string import Formatter

    if not template.lower().startswith(("https://", "http://")):
        return "must be an http(s) URL"
    try:
        parts = list(Formatter().parse(template))
    except ValueError:
        return "has an unmatched brace (write a literal one twice: '{{')"
    for _, name, spec, conversion in parts:
        if name is not None and (name not in OGP_TEMPLATE_FIELDS or spec or conversion):
            return f"may hold only {{title}}, {{slug}} and {{user}}, not {{{name}}}"
    return None


def _cloudinary_name(value: str) -> str | None:
    # Cloud names and public ids go into a URL path: anything else than these characters is a mistake.
    if re.fullmatch(r"[A-Za-z0-9_.\-/]+", value):
        return None
    return "may hold only letters, digits and _ . - /"


def _http_url(value: str) -> str | None:
    return None if value.startswith(("https://", "http://")) else "must start with https:// or http://"


def _github_api_url(value: str) -> str | None:
    return credential_url_problem(value)


def credential_url_problem(value: str) -> str | None:
    """Why ``value`` may not carry a credential (a token, a key, a signed request), or None: https only,
    plain http only to this machine (a test's stand-in), where nothing crosses a network."""
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
    except ValueError:
        return "must be an https:// URL"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and host:
        try:
            loopback = host == "localhost" or ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if loopback:
            return None
        return (
            "must start with https:// (plain http only to this machine: it would carry credentials in clear)"
        )
    return "must start with https://"


def _app_id(value: str) -> str | None:
    if value.isdigit():
        return None
    return "must be the App's numeric id (the 'App ID' on the App's settings page, not its name or client id)"


def _pem_key(value: str) -> str | None:
    # A PEM private key block (RSA or PKCS#8) on several lines, as GitHub's download holds it (a key
    # pasted into one line, with literal "\n", is the usual mistake). Decoding it is left to the GitHub
    # client, so settings import no cryptography.
    stripped = value.strip()
    if stripped.startswith("-----BEGIN ") and stripped.endswith("PRIVATE KEY-----") and "\n" in stripped:
        return None
    return (
        "is not a PEM private key: use the whole .pem file GitHub generated, its -----BEGIN and -----END "
        "lines and line breaks included"
    )


def _sns_topic(value: str) -> str | None:
    return None if value.startswith("arn:aws:sns:") else "must be an SNS topic ARN (arn:aws:sns:...)"


def _time_zone(value: str) -> str | None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        return f"must be an IANA time zone name such as Asia/Tokyo or UTC, not {value!r}"
    return None


def _positive_int(value: str) -> int:
    try:
        number = int(value.replace("_", ""))
    except ValueError:
        raise SettingProblem("must be a whole number") from None
    if number <= 0:
        raise SettingProblem("must be greater than 0")
    return number


def _relative_folder(value: str) -> str:
    folder = value.strip("/")
    if not folder or ".." in folder.split("/"):
        raise SettingProblem("must be a folder of the repository, such as 'images'")
    return folder


def _asset_url(value: str) -> str:
    if not value.startswith(("https://", "http://", "/")) or any(c in value for c in " \"'<>?#"):
        raise SettingProblem("must be an http(s) URL or a path starting with '/', without query or fragment")
    return value.rstrip("/")


@declared_settings
class RuntimeSettings:
    """The declarations; ``function.settings.Settings`` is the class that reads and checks them."""

    webhook_secret: str = setting(
        env="GITHUB_WEBHOOK_SECRET",
        doc="webhook secret",
        parse=_text,
        default="",
        default_doc="none: the app refuses to start without it or `…_PARAM`",
        param=Param("GITHUB_WEBHOOK_SECRET_PARAM", stack_key="webhookSecretParam"),
        secret=True,
        required="blog-api refuses to start without a webhook secret; set it to the GitHub App's webhook "
        "secret",
    )
    github_app_id: str | None = setting(
        env="GITHUB_APP_ID",
        doc="GitHub App id (JWT `iss`)",
        parse=_text,
        default=None,
        check=_app_id,
        # The configured id, or the value of githubAppIdParam read at deploy time.
        stack_key="githubAppId",
    )
    github_private_key: str | None = setting(
        env="GITHUB_APP_PRIVATE_KEY",
        doc="App private key, PEM text / its SSM name",
        parse=_text,
        default=None,
        check=_pem_key,
        param=Param("GITHUB_APP_PRIVATE_KEY_PARAM", stack_key="githubAppPrivateKeyParam"),
        secret=True,
    )
    github_api_url: str = setting(
        env="GITHUB_API_URL",
        doc="GitHub REST base URL",
        parse=lambda value: value.rstrip("/"),
        default="https://api.github.com",
        check=_github_api_url,
        stack_key="githubApiUrl",
    )
    database_url: str = setting(
        env="DATABASE_URL",
        doc="Peewee db_url: `mysql://user:pw@host:4000/db?ssl_ca=…&ssl_verify_cert=true"
        "&ssl_verify_identity=true` (TiDB; certificate and host name verified) or `sqlite:///path` / its SSM "
        "name",
        parse=_text,
        default="sqlite:///.data/blog.db",
        param=Param("DATABASE_URL_PARAM", stack_key="databaseUrlParam"),
        secret=True,
    )
    database_connections: str | None = setting(
        env="DATABASE_CONNECTIONS",
        doc="`keep`: a job's database connection stays open for the next job of the process (a warm Lambda "
        "environment); `per-job`: connect and close per job",
        parse=_lower,
        default=None,
        check=_connections,
        default_doc="`keep` on Lambda, `per-job` elsewhere",
    )
    database_max_connection_age_s: int = setting(
        env="DATABASE_MAX_CONNECTION_AGE_S",
        doc="seconds a kept database connection may live: an older one is closed before the next job and a "
        "new one opened (TiDB Cloud may cut a connection open for 30 minutes, and its public endpoint "
        "on AWS one idle for 340 s)",
        parse=_positive_int,
        default=300,
        check=lambda value: None if value <= 1800 else "must be at most 1800 (30 minutes)",
    )
    article_source: str = setting(
        env="ARTICLE_SOURCE",
        doc="`github` or `dir:PATH` (a local folder read as if it were the repository)",
        parse=_text,
        default="github",
        check=_article_source,
        on_lambda="github",
    )
    articles_dir: str = setting(
        env="ARTICLES_DIR",
        doc="folder of the repository that holds the articles",
        parse=lambda value: value.strip("/"),
        default="articles",
        stack_key="articlesDir",
    )
    article_branch: str | None = setting(
        env="ARTICLE_BRANCH",
        doc="the branch whose pushes are synced",
        parse=_text,
        default=None,
        default_doc="the repository's default branch",
        stack_key="articleBranch",
    )
    # The zone of zone-less front matter times (published_at: 2024-01-21 09:00), an IANA name.
    article_timezone: str = setting(
        env="ARTICLE_TIMEZONE",
        doc="IANA zone of front matter times without one (`published_at: 2024-01-21 09:30`), see "
        "[Article format](articles.md)",
        parse=_text,
        default="Asia/Tokyo",  # as Zenn reads a zone-less published_at
        check=_time_zone,
        strip=True,
    )
    lambda_function_name: str | None = setting(
        env="AWS_LAMBDA_FUNCTION_NAME",
        doc="set by Lambda: accept-and-invoke mode; unset: inline mode",
        parse=_text,
        default=None,
    )
    pass_through_path: str = setting(
        env="AWS_LWA_PASS_THROUGH_PATH",
        doc="route that non-HTTP events are posted to",
        parse=_text,
        default="/events",
        check=_absolute_path,
        on_lambda="/events",
    )
    # An alias (or version) of our own function for the self-invoke; None: the function itself.
    self_invoke_qualifier: str | None = setting(
        env="SELF_INVOKE_QUALIFIER",
        doc="alias of the function that the self-invoke targets (the program sets `live` when `snapStart` "
        "is on, so the worker also starts from the snapshot)",
        parse=_text,
        default=None,
        default_doc="— (the function itself)",
        stack_key="snapStart",
    )
    https_proxy: str | None = setting(
        env="HTTPS_PROXY",
        doc="outbound proxy (squid) for the Lambda API, SSM and GitHub",
        parse=_text,
        default=None,
        also=("https_proxy",),
        stack_key="httpsProxy",
    )
    no_proxy: tuple[str, ...] = setting(
        env="NO_PROXY",
        doc="comma-separated hosts that bypass the proxy",
        parse=split_list,
        default=(),
        also=("no_proxy",),
        stack_key="noProxy",
    )
    log_level: str = setting(
        env="LOG_LEVEL",
        doc="level of the app's own log lines",
        parse=_upper,
        default="INFO",
        check=_one_of(LOG_LEVELS),
        stack_key="logLevel",
    )
    # Third-party loggers stay at INFO or above unless this asks for them (DEBUG to debug urllib3...).
    library_log_level: str | None = setting(
        env="LIBRARY_LOG_LEVEL",
        doc="level of urllib3, botocore, peewee and markdown_it; unset, they stay at INFO or above whatever "
        "`LOG_LEVEL` says (their DEBUG lines carry download tokens, SQL parameters and article text)",
        parse=_upper,
        default=None,
        check=_one_of(LOG_LEVELS),
    )
    allow_raw_html: bool = setting(
        env="ARTICLE_ALLOW_RAW_HTML",
        doc="`true` keeps raw HTML in articles (still sanitized: "
        "[Articles](articles.md#one-sanitizer-always)); by default it is shown as text",
        parse=_flag,
        default=False,
    )
    # Base for repository images (/images/...) hosted elsewhere. None: the asset store serves them.
    asset_base_url: str | None = setting(
        env="ARTICLE_ASSET_BASE_URL",
        doc="http(s) base for repository images (`/images/…`) hosted elsewhere, e.g. a CDN or a public "
        "repository's raw URL; set, it wins: no image is copied to the asset store, and each answer puts it "
        "before the images' paths when it is served, so a new base needs no sync "
        "([Repository images](articles.md#repository-images))",
        parse=_asset_base_url,
        default=None,
        strip=True,
    )
    # Processes that parse and render a sync's changed articles; None: one per CPU the function has.
    render_processes: int | None = setting(
        env="RENDER_PROCESSES",
        doc="processes that render changed articles in parallel (a first sync); `1` renders in the "
        "function's own process",
        parse=_render_processes,
        default=None,
        default_doc="one per CPU the function has (Lambda: one per 1,769 MB)",
    )
    # The safety valve: a sync that would take more than this share of a user's served articles out of
    # service (and at least MASS_REMOVAL_MIN_ARTICLES) is held until a person confirms it.
    mass_removal_fraction: float = setting(
        env="MASS_REMOVAL_FRACTION",
        doc="a sync that would archive more than this share of a user's served articles (at least 20 of "
        "them) is held, nothing archived, until `blog-api sync --user U --confirm-removal` "
        "([Operating](operating.md#a-sync-held-for-mass-removal)); `1` never holds",
        parse=_fraction,
        default=0.5,
        strip=True,
    )
    # GitHub account login -> blog user name, for installation events whose login differs from the name.
    installation_user_map: Mapping[str, str] = setting(
        env="GITHUB_INSTALLATION_USER_MAP",
        doc="`login=user,…`: installation account → blog user, when they differ",
        parse=_user_map,
        default_factory=dict,
        strip=True,
    )
    # Browser origins that may call the read routes (exact "scheme://host[:port]"); empty: no CORS.
    cors_allowed_origins: tuple[str, ...] = setting(
        env="CORS_ALLOWED_ORIGINS",
        doc="comma-separated origins (`https://blog.example.com`, no trailing `/`) that may call the read "
        "routes from a browser, or `*` for any page (a public read API: no credentials are ever allowed)",
        parse=split_list,
        default=(),
        check=_origins,
        default_doc="— (no CORS)",
        stack_key="corsAllowedOrigins",
    )
    # The blog's public URL: links in the feed and the sitemap. Never the request's Host (a shared cache
    # would keep a feed whose links a stranger chose): without it, the feed and sitemap answer 404.
    site_url: str | None = setting(
        env="SITE_URL",
        doc="the blog's public URL, for links in the feed and sitemap: an article is "
        "`SITE_URL/articles/<slug>`",
        parse=_without_trailing_slash,
        default=None,
        check=_http_url,
        default_doc="— (feed and sitemap answer 404 naming it)",
        stack_key="siteUrl",
    )
    # The share image (ogpUrl) of an article without a thumbnail: a template, else a Cloudinary card,
    # else one image for the whole site (function.ogp).
    ogp_image_url_template: str | None = setting(
        env="OGP_IMAGE_URL_TEMPLATE",
        doc="share image (`ogpUrl`) of an article without a thumbnail: a URL with `{title}`, `{slug}` and "
        "`{user}`, each URL-encoded into it (`https://og.example.com/card?title={title}`)",
        parse=_text,
        default=None,
        check=ogp_template_problem,
        strip=True,
        default_doc="— (Cloudinary, below, or the default image)",
        stack_key="ogpImageUrlTemplate",
    )
    cloudinary_cloud_name: str | None = setting(
        env="CLOUDINARY_CLOUD_NAME",
        doc="Cloudinary cloud that draws the title on a base image as the share image, in signed URLs, "
        "when no template is set; with the two settings below",
        parse=_text,
        default=None,
        check=_cloudinary_name,
        strip=True,
        stack_key="cloudinaryCloudName",
    )
    cloudinary_ogp_public_id: str | None = setting(
        env="CLOUDINARY_OGP_PUBLIC_ID",
        doc="public id of that base image (`blog/og-base`)",
        parse=_text,
        default=None,
        check=_cloudinary_name,
        strip=True,
        stack_key="cloudinaryOgpPublicId",
    )
    cloudinary_api_secret: str | None = setting(
        env="CLOUDINARY_API_SECRET",
        doc="the Cloudinary API secret that signs those URLs / its SSM name",
        parse=_text,
        default=None,
        strip=True,
        param=Param("CLOUDINARY_API_SECRET_PARAM", stack_key="cloudinaryApiSecretParam"),
        secret=True,
    )
    ogp_default_image_url: str | None = setting(
        env="OGP_DEFAULT_IMAGE_URL",
        doc="share image of an article without a thumbnail when neither the template nor Cloudinary is "
        'set; unset too, `ogpUrl` is `""`',
        parse=_text,
        default=None,
        check=_http_url,
        strip=True,
        stack_key="ogpDefaultImageUrl",
    )
    # Semantic search (function.embeddings): which embedding provider, where, which model.
    embedding_provider: str | None = setting(
        env="EMBEDDING_PROVIDER",
        doc="turns semantic search on: `service` (an embedding service's `/embed` and `/chunks` at "
        "`EMBEDDING_URL`), `bedrock` (Amazon Bedrock's Titan Text Embeddings V2) or `openai` (an "
        "OpenAI-compatible `/v1/embeddings` at `EMBEDDING_URL`)",
        parse=_lower,
        default=None,
        check=_one_of(EMBEDDING_PROVIDERS),
        strip=True,
        default_doc="— (lexical search only)",
        stack_key="embeddingProvider",
    )
    embedding_url: str | None = setting(
        env="EMBEDDING_URL",
        doc="base URL of the embedding service (`service`: `{base}/embed`; `openai`: "
        "`{base}/v1/embeddings`); with `bedrock`, an endpoint URL other than the region's (a VPC endpoint)",
        parse=lambda value: value.rstrip("/"),
        default=None,
        check=_http_url,
        strip=True,
        stack_key="embeddingUrl",
    )
    embedding_model: str | None = setting(
        env="EMBEDDING_MODEL",
        doc="the model asked for: a Bedrock model id (`amazon.titan-embed-text-v2:0`) or the OpenAI-"
        "compatible endpoint's model name (`text-embedding-3-small`); the service picks its own",
        parse=_text,
        default=None,
        strip=True,
        default_doc="`amazon.titan-embed-text-v2:0` for `bedrock`, `text-embedding-3-small` for `openai`",
        stack_key="embeddingModel",
    )
    embedding_api_key: str | None = setting(
        env="EMBEDDING_API_KEY",
        doc="bearer token sent to the embedding service or OpenAI-compatible endpoint / its SSM name",
        parse=_text,
        default=None,
        strip=True,
        param=Param("EMBEDDING_API_KEY_PARAM", stack_key="embeddingApiKeyParam"),
        secret=True,
    )
    read_cache_control: str = setting(
        env="READ_CACHE_CONTROL",
        doc="the `Cache-Control` of every read answer",
        parse=_text,
        default="public, max-age=60, stale-while-revalidate=600",
        strip=True,
    )

    # The stack's alarm topic: told when a webhook endpoint is disabled (None: the log only).
    alarm_topic_arn: str | None = setting(
        env="ALARM_TOPIC_ARN",
        doc="SNS topic told when a front end's webhook endpoint is disabled after failing for 3 days "
        "([Telling the front end](front-ends.md#retries-coalescing-disabling)); the program sets the "
        "stack's alarm topic, named after its prefix; unset, a warning in the log",
        parse=_text,
        default=None,
        check=_sns_topic,
        strip=True,
        stack_key="physicalPrefix",
    )
    # Lambda refuses a database across the network without TLS unless this says so (a private network
    # the operator trusts); loopback and SQLite need nothing.
    database_allow_plaintext: bool = setting(
        env="DATABASE_ALLOW_PLAINTEXT",
        doc="`true` lets the function on Lambda connect to a MySQL/TiDB server on another host without TLS "
        "(unsafe: whoever is on the path reads the password and the data); by default that is refused at "
        "start-up",
        parse=_flag,
        default=False,
    )

    # Repository images (docs/articles.md#images): which files, where they are stored, how large.
    images_dir: str = setting(
        env="ARTICLE_IMAGES_DIR",
        doc="folder of the repository whose files are images for readers (any other file an article "
        "points at is one too)",
        parse=_relative_folder,
        default="images",
        strip=True,
    )
    asset_bucket: str | None = setting(
        env="ASSET_BUCKET",
        doc="S3 bucket that stores the images (the program sets the stack's own bucket); unset: the folder "
        "`ASSET_DIR`",
        parse=_text,
        default=None,
        strip=True,
    )
    asset_dir: str = setting(
        env="ASSET_DIR",
        doc="folder that stores the images when `ASSET_BUCKET` is unset; the app serves it at "
        "`/assets/<key>`",
        parse=_text,
        default=".data/assets",
        strip=True,
    )
    asset_url: str = setting(
        env="ASSET_URL",
        doc="base URL of the stored images in `contentHtml`, book covers and the feed, put in when an answer "
        "is served: a new value changes every answer at once, with no sync (the program sets the stack's "
        "CloudFront domain); the default is the app's own `/assets`, root-relative (under `SITE_URL` in the "
        "feed)",
        parse=_asset_url,
        default="/assets",
        strip=True,
    )
    asset_max_bytes: int = setting(
        env="ASSET_MAX_BYTES",
        doc="largest image stored, in bytes; a larger one is a warning and is not downloaded",
        parse=_positive_int,
        default=5 * 1024 * 1024,
        default_doc="5242880 (5 MiB)",
    )
    asset_push_max_bytes: int = setting(
        env="ASSET_PUSH_MAX_BYTES",
        doc="most image bytes downloaded by one sync; the rest wait for the next push",
        parse=_positive_int,
        default=100 * 1024 * 1024,
        default_doc="104857600 (100 MiB)",
    )
    asset_grace_days: int = setting(
        env="ASSET_GRACE_DAYS",
        doc="days a stored image is kept after it left the repository and no article points at it, before "
        "the scheduled sweep deletes it",
        parse=_positive_int,
        default=7,
    )
    delivery_retention_days: int = setting(
        env="DELIVERY_RETENTION_DAYS",
        doc="days a delivery's record (what `blog-api deliveries` lists) is kept before the scheduled sweep "
        "deletes it; each repository's last sync is kept whatever its age, since a replayed push is "
        "compared with it",
        parse=_positive_int,
        default=90,
    )


def declared() -> tuple[Setting[Any], ...]:
    """Every runtime setting, in the order of the declarations."""
    return settings_of(RuntimeSettings)


def declaration(attribute: str) -> Setting[Any]:
    """The declaration of the field ``attribute`` (KeyError for a name nobody declared)."""
    for spec in declared():
        if spec.attribute == attribute:
            return spec
    raise KeyError(attribute)


def variable(attribute: str) -> str:
    """The environment variable of the field ``attribute``: ``variable("log_level")`` is ``LOG_LEVEL``."""
    return declaration(attribute).env
