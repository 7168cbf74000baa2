"""Structured logs: one JSON object per line, stable messages, fields as keys, secrets redacted."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else was passed with ``extra=`` and becomes a field.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
REDACTED = "[redacted]"
# The two lines every delivery logs, which ``blog-api logs durations`` pairs.
RECEIVED_MESSAGE = "Received GitHub webhook"
COMPLETE_MESSAGE = "Webhook processing complete"


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line, replacing any known secret value wherever it appears."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        # Short values would redact innocent text; real secrets are long.
        self._secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return self._scrub(json.dumps(entry, default=str, ensure_ascii=False))


def configure_logging(level: str = "INFO", secrets: Iterable[str] = (), stream: object = None) -> None:
    """Route the root logger to one JSON line per record on ``stream`` (stderr by default)."""
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(JsonFormatter(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_blog_api", False):
            root.removeHandler(old)
    handler._blog_api = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    # Third-party DEBUG lines carry URLs with one-time download tokens (urllib3) or request bodies
    # (botocore): never below INFO, whatever LOG_LEVEL says.
    for noisy in ("urllib3", "botocore", "boto3", "s3transfer"):
        logging.getLogger(noisy).setLevel(logging.INFO)
