"""Structured logs: one JSON object per line, stable messages, fields as keys, secrets redacted.

Inside the AWS Lambda Python runtime the bootstrap has already put its own handler on the root logger
before our module is imported; ``configure_logging`` takes that handler's place (writing through the
runtime's log sink) so that every record is written exactly once, and always through our redaction.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

# Attributes every LogRecord has; anything else was passed with ``extra=`` and becomes a field.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
REDACTED = "[redacted]"
# The two lines every delivery logs, which ``blog-api logs durations`` pairs.
RECEIVED_MESSAGE = "Received GitHub webhook"
COMPLETE_MESSAGE = "Webhook processing complete"

# Libraries whose DEBUG lines carry URLs with one-time download tokens (urllib3), request bodies
# (botocore), SQL with parameters (peewee) or article text (markdown_it): held at INFO or above
# whatever LOG_LEVEL says, unless LIBRARY_LOG_LEVEL asks for them.
LIBRARY_LOGGERS = ("urllib3", "botocore", "boto3", "s3transfer", "peewee", "markdown_it")

# Secrets recognised by their shape, whoever configured them: what a value list cannot know about
# (an installation token minted a second ago, a JWT, a key pasted into a message).
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM blocks, also cut short (a message truncated to 500 characters keeps its BEGIN line).
    (
        re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(?:.*?-----END \1-----|.*)", re.DOTALL),
        REDACTED,
    ),
    # Authorization: header values, as a header line, a dict's repr or JSON; the scheme goes too.
    # Before the token shapes, so that the whole value goes, whatever it is.
    (
        re.compile(
            r"""(?i)(\b(?:proxy-)?authorization\b["']?\s*[:=]\s*["']?)"""
            r"""(?:(?:bearer|token|basic|digest|bot)\s+)?[^\s"',;}\]]+"""
        ),
        r"\1" + REDACTED,
    ),
    # A password in a URL: scheme://user:PASSWORD@host.
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@\"']*:)[^\s@/\"']+@"), r"\1" + REDACTED + "@"),
    # One-time tokens and signatures in query strings (raw download URLs, presigned S3 URLs).
    (
        re.compile(
            r"(?i)([?&](?:token|access_token|sig|signature|x-amz-signature|x-amz-credential"
            r"|x-amz-security-token)=)[^&\s\"'#]+"
        ),
        r"\1" + REDACTED,
    ),
    # GitHub tokens: installation (ghs_), user-to-server (ghu_), personal (ghp_), OAuth (gho_),
    # refresh (ghr_), fine-grained personal (github_pat_).
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    # JWTs: base64url header and payload (both JSON objects, so both start "eyJ"), then a signature.
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
)

# Mapping keys (header names, settings) whose value is a secret whatever it looks like.
_SECRET_KEYS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "password", "passwd", "token"}
    | {"access_token", "secret", "private_key", "client_secret", "x-amz-security-token"}
)


class Redactor:
    """Replaces configured secret values and anything shaped like a secret (``_PATTERNS``)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Short values would redact innocent text; real secrets are long.
        self._secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def text(self, text: str) -> str:
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def value(self, value: Any) -> Any:
        """``value`` with every string inside it redacted; anything not JSON becomes its str()."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, dict):
            return {
                self.text(str(k)): REDACTED if str(k).lower() in _SECRET_KEYS else self.value(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(v) for v in value]
        return self.text(str(value))


# Patterns only, for code that has no settings at hand; configure_logging adds the secret values.
_current = Redactor()


def redact(text: str) -> str:
    """``text`` fit to leave the process: in an error body, a delivery record, a log line."""
    return _current.text(text)


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line, every string in it redacted."""

    def __init__(self, secrets: Iterable[str] = (), *, redactor: Redactor | None = None) -> None:
        super().__init__()
        self._redactor = redactor or Redactor(secrets)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(self._redactor.value(entry), ensure_ascii=False)


class _SinkHandler(logging.Handler):
    """Writes each formatted record through the Lambda runtime's own log sink (framed on its
    telemetry pipe when there is one, stdout otherwise), one record per line."""

    def __init__(self, sink: Any) -> None:
        super().__init__()
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._sink.log(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - logging must never break the request
            self.handleError(record)


def _is_ours(handler: logging.Handler) -> bool:
    return bool(getattr(handler, "_blog_api", False))


def _is_replaceable(handler: logging.Handler) -> bool:
    """Handlers that would write a second, unredacted copy of each record: the Lambda runtime's and
    plain stream handlers (``logging.basicConfig``). Capturing handlers (pytest's) are left alone."""
    return type(handler).__module__.startswith("awslambdaric") or type(handler) is logging.StreamHandler


def configure_logging(
    level: str = "INFO",
    secrets: Iterable[str] = (),
    stream: object = None,
    *,
    library_level: str | None = None,
) -> Redactor:
    """Make the root logger write one redacted JSON line per record, and only that.

    Replaces our previous handler, the Lambda runtime's (reusing its sink and its request-id filter)
    and any plain stream handler. Writes to ``stream`` when given, else the runtime's sink, else stderr.
    Returns the redactor, for whatever else leaves the process.
    """
    global _current
    redactor = Redactor(secrets)
    _current = redactor
    root = logging.getLogger()
    sink: Any = None
    filters: list[Any] = []
    for old in list(root.handlers):
        if _is_ours(old) or _is_replaceable(old):
            # The sink survives a second call (create_app twice in one process) on our handler.
            found = getattr(old, "log_sink", None) or getattr(old, "_lambda_sink", None)
            if sink is None and found is not None:
                sink, filters = found, list(old.filters)
            root.removeHandler(old)
    handler: logging.Handler
    if stream is not None:
        handler = logging.StreamHandler(stream)  # type: ignore[call-overload]
    elif sink is not None:
        handler = _SinkHandler(sink)
        for f in filters:  # the runtime's filter puts aws_request_id on each record
            handler.addFilter(f)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(redactor=redactor))
    handler._blog_api = True  # type: ignore[attr-defined]
    if sink is not None:
        handler._lambda_sink = sink  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    if library_level:
        floor = logging.getLevelName(library_level.upper())
    else:
        floor = max(logging.INFO, root.level)
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(floor)
    return redactor
