"""One name, one place: the CloudWatch metrics blog-api emits (embedded metric format).

``function.observability.metrics`` writes them; an alarm in ``infra/`` can import the same names, so a rename
cannot leave an alarm watching a metric that no longer exists.
"""

from __future__ import annotations

NAMESPACE = "blog-api"
# The one dimension every metric carries: the Lambda function's name (``d-st-blog-api``).
DIMENSION_FUNCTION = "FunctionName"

# Webhook route, Lambda mode: from request start to the queued envelope (Milliseconds).
ACCEPT_LATENCY = "AcceptLatency"
# Worker, after a push ran (inline or /events): wall time of the sync (Milliseconds).
PROCESSING_DURATION = "ProcessingDuration"
# Worker counts per push (Count): article files seen, files that failed, articles archived.
ARTICLES_PROCESSED = "ArticlesProcessed"
ARTICLES_FAILED = "ArticlesFailed"
ARTICLES_ARCHIVED = "ArticlesArchived"
# Worker: a push whose processing raised (unknown installation, GitHub or database down) (Count).
PROCESSING_ERRORS = "ProcessingErrors"
# Redelivery sweep (Count): redeliveries requested from GitHub, and requests GitHub refused.
REDELIVERIES = "Redeliveries"
REDELIVERY_ERRORS = "RedeliveryErrors"

UNIT_MILLISECONDS = "Milliseconds"
UNIT_COUNT = "Count"
