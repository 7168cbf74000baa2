"""One name, one place: physical names, environment variable names and the pass-through path.

Both ``infra/`` (which writes these variables onto the Lambda function) and ``function/``
(which reads them) import from here, so a rename cannot leave the two disagreeing.
"""

from __future__ import annotations

PROJECT = "blog-api"

# Routes
WEBHOOK_ROUTE = "/webhooks/github"
DEFAULT_PASS_THROUGH_PATH = "/events"

# Environment variable names
ENV_WEBHOOK_SECRET = "GITHUB_WEBHOOK_SECRET"
ENV_WEBHOOK_SECRET_PARAM = "GITHUB_WEBHOOK_SECRET_PARAM"
ENV_GITHUB_APP_ID = "GITHUB_APP_ID"
ENV_GITHUB_APP_PRIVATE_KEY = "GITHUB_APP_PRIVATE_KEY"
ENV_GITHUB_APP_PRIVATE_KEY_PARAM = "GITHUB_APP_PRIVATE_KEY_PARAM"
ENV_GITHUB_API_URL = "GITHUB_API_URL"
ENV_DATABASE_URL = "DATABASE_URL"
ENV_DATABASE_URL_PARAM = "DATABASE_URL_PARAM"
ENV_DATABASE_CONNECTIONS = "DATABASE_CONNECTIONS"  # keep | per-job
ENV_ARTICLE_SOURCE = "ARTICLE_SOURCE"
ENV_ARTICLES_DIR = "ARTICLES_DIR"
ENV_ARTICLE_BRANCH = "ARTICLE_BRANCH"
ENV_ARTICLE_TIMEZONE = "ARTICLE_TIMEZONE"
ENV_LAMBDA_FUNCTION_NAME = "AWS_LAMBDA_FUNCTION_NAME"
ENV_PASS_THROUGH_PATH = "AWS_LWA_PASS_THROUGH_PATH"
# The alias the self-invoke targets (set by the program with SnapStart on, so the worker runs restored).
ENV_SELF_INVOKE_QUALIFIER = "SELF_INVOKE_QUALIFIER"
ENV_HTTPS_PROXY = "HTTPS_PROXY"
ENV_NO_PROXY = "NO_PROXY"
ENV_LOG_LEVEL = "LOG_LEVEL"
ENV_LIBRARY_LOG_LEVEL = "LIBRARY_LOG_LEVEL"
ENV_ALLOW_RAW_HTML = "ARTICLE_ALLOW_RAW_HTML"
ENV_ASSET_BASE_URL = "ARTICLE_ASSET_BASE_URL"
ENV_INSTALLATION_MAP = "GITHUB_INSTALLATION_USER_MAP"
# The SNS topic of the stack's alarms, which the function also tells when it disables a webhook endpoint.
ENV_ALARM_TOPIC_ARN = "ALARM_TOPIC_ARN"

# Defaults
DEFAULT_GITHUB_API_URL = "https://api.github.com"
DEFAULT_DATABASE_URL = "sqlite:///.data/blog.db"
DEFAULT_ARTICLE_SOURCE = "github"
DEFAULT_ARTICLES_DIR = "articles"
DEFAULT_ARTICLE_TIMEZONE = "Asia/Tokyo"  # as Zenn reads a zone-less published_at
DEFAULT_LOG_LEVEL = "INFO"

# The function's handler, as Lambda names it.
HANDLER = "function.handler.handler"

# With SnapStart, the alias of the published version that serves traffic (the API, the schedule).
LIVE_ALIAS = "live"

# Lambda's limit for an asynchronous (InvocationType=Event) payload.
ASYNC_INVOKE_PAYLOAD_LIMIT = 1_048_576


def function_name(physical_prefix: str) -> str:
    """The fixed physical name of the Lambda function for a stack prefix (``d-st`` → ``d-st-blog-api``)."""
    if not physical_prefix:
        raise ValueError("physical prefix must not be empty")
    return f"{physical_prefix}-{PROJECT}"


def function_arn(region: str, account_id: str, physical_prefix: str) -> str:
    """The function's ARN as a plain string: lets IAM grant self-invoke without referencing the function."""
    return f"arn:aws:lambda:{region}:{account_id}:function:{function_name(physical_prefix)}"


def alarm_topic_name(physical_prefix: str) -> str:
    """The stack's alarm topic (``d-st`` → ``d-st-blog-api-alarms``)."""
    return f"{function_name(physical_prefix)}-alarms"


def alarm_topic_arn(region: str, account_id: str, physical_prefix: str) -> str:
    """The alarm topic's ARN as a plain string: the function's policy and environment name it without
    depending on the topic, which is created after the function."""
    return f"arn:aws:sns:{region}:{account_id}:{alarm_topic_name(physical_prefix)}"


# The constant input of the scheduled EventBridge rule (infra/schedule.py): the function's non-HTTP
# path receives exactly {"kind": SCHEDULED_REDELIVERY_KIND} and runs the redelivery sweep.
SCHEDULED_REDELIVERY_KIND = "scheduled-redelivery"
