"""A statement's parameters written into its text for MySQL/TiDB, as PyMySQL writes them, faster.

The writes of a sync are queued as text (``batching.StatementQueue``: many statements per round trip),
so every article's Markdown and HTML is escaped into a string literal. PyMySQL does it with
``str.translate`` over a table, which runs at a few MB per second on text that is not pure ASCII: a
first sync of 500 real-shaped articles (80 MB of Markdown and HTML) spent about 2 s of CPU there, on
the process that also feeds the render processes. The same escapes done on the UTF-8 bytes with
``bytes.replace`` (a C scan per character that needs one) give the same string some twenty times
faster. Anything but a string goes to PyMySQL's own ``escape`` unchanged, and so does everything when
the server runs with NO_BACKSLASH_ESCAPES (then only quotes are doubled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pymysql.constants import SERVER_STATUS

# PyMySQL's escapes (pymysql.converters._escape_table), the backslash first so no escape is escaped.
_ESCAPES = (
    (b"\\", b"\\\\"),
    (b"\0", b"\\0"),
    (b"\n", b"\\n"),
    (b"\r", b"\\r"),
    (b"\032", b"\\Z"),
    (b'"', b'\\"'),
    (b"'", b"\\'"),
)


def escape_text(value: str) -> str:
    """``pymysql.converters.escape_string(value)``, the same string (lone surrogates included)."""
    data = value.encode("utf-8", "surrogatepass")
    for char, escaped in _ESCAPES:
        if char in data:
            data = data.replace(char, escaped)
    return data.decode("utf-8", "surrogatepass")


def statement_text(connection: Any, sql: str, params: Sequence[Any] | None) -> str:
    """``connection.cursor().mogrify(sql, params)`` for a PyMySQL ``connection``: the statement as sent."""
    if not params:
        return connection.cursor().mogrify(sql, params or None)  # type: ignore[no-any-return]
    if connection.server_status & SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES:
        return connection.cursor().mogrify(sql, tuple(params))  # type: ignore[no-any-return]
    escape = connection.escape
    literals = tuple(f"'{escape_text(v)}'" if isinstance(v, str) else escape(v) for v in params)
    return sql % literals
