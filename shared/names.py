"""One name, one place: physical names, routes and the events the function and the program agree on.

Both ``infra/`` (which creates the resources) and ``function/`` (which runs in them) import from here,
so a rename cannot leave the two disagreeing.
"""

from __future__ import annotations

PROJECT = "blog-api"

# Routes
WEBHOOK_ROUTE = "/webhooks/github"
# Words after /users/<name>/articles/ that name a route, not an article: the route wins, so an article
# whose slug is one of them is not served at its own address (Zenn's slugs are 12 to 50 characters, so
# none of Zenn's can be one).
FACETS_ROUTE = "tag-facets"
SEARCH_ROUTE = "search"
RESERVED_ARTICLE_SLUGS = frozenset({FACETS_ROUTE, SEARCH_ROUTE})

# The settings (environment variables, their defaults and checks) are declared in
# shared/runtime_settings.py: ``variable("log_level")`` is "LOG_LEVEL".

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
