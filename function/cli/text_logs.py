"""Log lines on a terminal: ``blog-api`` commands print what the code logs as one line of words with
its fields (``warning Tree listing incomplete; nothing archived: head_sha=...``), redacted, never the
bare message. The deployed function writes JSON instead (``function.observability.logs``).

A command that prints some records itself, in its own words (``sync`` prints each file's failure and
warning in its summary), hides those while it runs (``reported_by_command``), so each is printed once.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

from function.observability.logs import redact

# Attributes every LogRecord has; anything else was passed with ``extra=`` and is a field.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
_MARK = "_blog_api_text"


class TextFormatter(logging.Formatter):
    """``<level> <message>: key=value, key=value``; strings redacted, long values cut."""

    def format(self, record: logging.LogRecord) -> str:
        fields = [
            f"{key}={_short(value)}"
            for key, value in record.__dict__.items()
            if key not in _STANDARD and not key.startswith("_") and value is not None
        ]
        line = f"{record.levelname.lower()} {record.getMessage()}"
        if fields:
            line += ": " + ", ".join(fields)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return redact(line)


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def configure_text_logging(level: str = "WARNING") -> logging.Handler:
    """Records of ``level`` and above go to stderr (as it is now) as text lines; replaces a handler
    this function installed before (each command run in a process installs one)."""
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, _MARK, False):
            root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TextFormatter())
    handler.setLevel(level)
    setattr(handler, _MARK, True)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > handler.level:
        root.setLevel(handler.level)
    return handler


class _Hide(logging.Filter):
    def __init__(self, messages: frozenset[str]) -> None:
        super().__init__()
        self._messages = messages

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg not in self._messages


@contextlib.contextmanager
def reported_by_command(messages: frozenset[str]) -> Iterator[None]:
    """While the block runs, records with these messages are not printed as log lines: the command
    prints each of them itself, with its fields, in its summary."""
    hide = _Hide(messages)
    handlers = [h for h in logging.getLogger().handlers if getattr(h, _MARK, False)]
    for handler in handlers:
        handler.addFilter(hide)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(hide)
