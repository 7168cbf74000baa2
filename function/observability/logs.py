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
    # Header lines and fields whose whole value is a credential, up to the end of the line or field:
    # cookies hold spaces and ";", API keys any characters.
    (
        re.compile(
            r"""(?i)(\b(?:set-)?cookie\b["']?\s*[:=]\s*["']?|\b(?:x-)?api[-_]key\b["']?\s*[:=]\s*["']?)"""
            r"""[^\r\n"'}]+"""
        ),
        r"\1" + REDACTED,
    ),
    # A password in a URL: scheme://user:PASSWORD@host. The password may hold "/", "'" or spaces when
    # it was not URL-encoded; it ends at the last "@" before a host, on the same line.
    (
        re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@\"']*:)[^@\r\n]{1,256}?@(?=[A-Za-z0-9\[])"),
        r"\1" + REDACTED + "@",
    ),
    # Secrets in query strings and key=value text (raw download URLs, presigned S3 URLs, a database
    # URL's key password).
    (
        re.compile(
            r"(?i)((?:[?&]|\b)(?:token|access_token|sig|signature|x-amz-signature|x-amz-credential"
            r"|x-amz-security-token|ssl_key_password|password|passwd)=)[^&\s\"'#]+"
        ),
        r"\1" + REDACTED,
    ),
    # AWS secret access keys and session tokens named as such (a settings dump, a credentials file,
    # botocore's debug, the Lambda environment's AWS_SESSION_TOKEN).
    (
        re.compile(
            r"""(?i)(\b(?:aws_)?(?:secret_?access_?key|session_?token|security_?token)\b["']?\s*[:=]\s*["']?)"""
            r"""[A-Za-z0-9/+=]{16,}"""
        ),
        r"\1" + REDACTED,
    ),
    # GitHub tokens: installation (ghs_), user-to-server (ghu_), personal (ghp_), OAuth (gho_),
    # refresh (ghr_), fine-grained personal (github_pat_). Anywhere, not after "\b" or a non-letter: a
    # token glued to a name (installation_token_ghs_..., xghs_...) is still a token.
    (re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    # JWTs: base64url header and payload (both JSON objects, so both start "eyJ"), then a signature.
    (re.compile(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
    # AWS access key ids: long-term (AKIA) and temporary (ASIA).
    (re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), REDACTED),
    # AWS secret access keys on their own: 40 base64 characters mixing upper and lower case and a digit,
    # "/" or "+" (a git SHA is lower-case hex, so it never matches).
    (
        re.compile(
            r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
            r"(?=[A-Za-z0-9/+]{0,39}[0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
        ),
        REDACTED,
    ),
)

# Mapping keys (header names, settings) whose value is a secret whatever it looks like.
_SECRET_KEYS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "password", "passwd", "token"}
    | {"access_token", "secret", "private_key", "client_secret", "x-amz-security-token"}
    | {"x-api-key", "api_key", "api-key", "ssl_key_password", "aws_secret_access_key", "secretaccesskey"}
    | {"aws_session_token", "session_token", "aws_security_token", "security_token"}
)


_MIN_SECRET_CHARS = 6


class Redactor:
    """Replaces configured secret values and anything shaped like a secret (``_PATTERNS``)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Short values would redact innocent text; real secrets are long.
        self._secrets = sorted(
            {s for s in secrets if s and len(s) >= _MIN_SECRET_CHARS}, key=len, reverse=True
        )

    def text(self, text: str) -> str:
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
            text = self._cut_secret(text, secret)
        return text

    @staticmethod
    def _cut_secret(text: str, secret: str) -> str:
        """Text someone cut before redacting can end in the first part of a secret: that part goes too."""
        for length in range(min(len(secret) - 1, len(text)), _MIN_SECRET_CHARS - 1, -1):
            if text.endswith(secret[:length]):
                return text[:-length] + REDACTED
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


def redact(text: str, limit: int | None = None) -> str:
    """``text`` fit to leave the process: in an error body, a delivery record, a log line. With
    ``limit``, cut to that many characters once redacted (a secret cut first could lose the shape
    that gives it away)."""
    redacted = _current.text(text)
    return redacted if limit is None else redacted[:limit]


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
