"""What the TiDB-faithful test database reads in the SQL a client sends, and how it rewrites it.

The relay (``tests.kit.tidb_proxy``) passes every statement to MariaDB, changed in two places only:

- a ``BEGIN`` (or a bare ``START TRANSACTION``) becomes ``START TRANSACTION WITH CONSISTENT SNAPSHOT``.
  TiDB's pessimistic transactions read a plain ``SELECT`` at the snapshot taken when the transaction
  began; InnoDB takes its snapshot at the first read instead, which hides a read-then-write race that
  TiDB shows (the first statement being an ``UPDATE`` that waited for a lock).
- ``GET_LOCK(name, timeout)`` calls a function that waits as TiDB does: at least 1 s, at most 1 hour,
  and an hour for ``-1`` (PingCAP's "Locking functions" page).

Statements are split and searched outside quoted strings, quoted names and comments, so an article
that talks about ``GET_LOCK(`` or starts a paragraph with "BEGIN" is sent as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

CONSISTENT_BEGIN = "START TRANSACTION WITH CONSISTENT SNAPSHOT"

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_BEGIN = re.compile(r"\s*(BEGIN(\s+WORK)?|START\s+TRANSACTION)\s*", re.IGNORECASE)
# The table a statement writes: INSERT/REPLACE INTO, UPDATE, DELETE FROM (one table, as the store writes).
_WRITTEN = re.compile(
    r"\s*(?:(?:INSERT|REPLACE)(?:\s+(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE))*\s+(?:INTO\s+)?"
    r"|UPDATE(?:\s+(?:LOW_PRIORITY|IGNORE))*\s+|DELETE(?:\s+(?:LOW_PRIORITY|QUICK|IGNORE))*\s+FROM\s+)"
    r"(?:`([^`]+)`|([\w$]+))(?:\.(?:`([^`]+)`|([\w$]+)))?",
    re.IGNORECASE,
)
_USE = re.compile(r"\s*USE\s+(?:`([^`]+)`|([\w$]+))\s*", re.IGNORECASE)
# Texts without any of these words pass unread (most SELECTs): nothing in them is rewritten or noted.
_KEYWORDS = re.compile(
    r"BEGIN|START|GET_LOCK|INSERT|UPDATE|DELETE|REPLACE|CREATE|ALTER|RENAME|DROP|USE", re.IGNORECASE
)
_WRITE_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE"})
# Statements after which a table's columns or indexes may have changed: its checks are made again.
_DDL = re.compile(
    r"\s*(?:CREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?|ALTER\s+(?:ONLINE\s+|IGNORE\s+)*TABLE|"
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    r"`?[\w$]+`?\s+ON|DROP\s+INDEX\s+(?:IF\s+EXISTS\s+)?`?[\w$]+`?\s+ON|RENAME\s+TABLE\s+(?:`?[\w$]+`?\.)?"
    r"`?[\w$]+`?\s+TO)\s+(?:`([^`]+)`|([\w$]+))(?:\.(?:`([^`]+)`|([\w$]+)))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Piece:
    """A stretch of SQL text: code (``quoted`` False) or a quoted string, name or comment."""

    text: str
    quoted: bool


# A quoted stretch: a string (backslash escapes, doubled quotes), a backquoted name, or a comment. One
# left open runs to the end of the text, as the server would read it.
_QUOTED = re.compile(
    r"""'[^'\\]*+(?:(?:\\.|'')[^'\\]*+)*+'?"""
    r"""|"[^"\\]*+(?:(?:\\.|"")[^"\\]*+)*+"?"""
    r"""|`[^`]*+(?:``[^`]*+)*+`?"""
    r"""|\#[^\n]*+\n?|--(?=[ \t\r\n]|$)[^\n]*+\n?|/\*.*?(?:\*/|\Z)""",
    re.DOTALL,
)


def pieces(sql: str) -> Iterator[Piece]:
    """``sql`` cut into code and quoted stretches (strings with backslash escapes and doubled quotes,
    backquoted names, ``--``/``#``/``/* */`` comments), in order; joined they give ``sql`` back."""
    start = 0
    for match in _QUOTED.finditer(sql):
        if match.start() > start:
            yield Piece(sql[start : match.start()], False)
        yield Piece(match.group(), True)
        start = match.end()
    if start < len(sql):
        yield Piece(sql[start:], False)


def statements(sql: str) -> list[str]:
    """The statements of a (multi-statement) text, split at semicolons outside quotes."""
    found: list[str] = []
    current: list[str] = []
    for piece in pieces(sql):
        if piece.quoted:
            current.append(piece.text)
            continue
        parts = piece.text.split(";")
        for part in parts[:-1]:
            current.append(part)
            found.append("".join(current))
            current = []
        current.append(parts[-1])
    tail = "".join(current)
    if tail.strip():
        found.append(tail)
    return found


@dataclass(frozen=True)
class Rewritten:
    """A client's text as the relay sends it on, and what the relay must know about it."""

    sql: str
    writes: bool  # it may write rows or start a transaction: the transaction's byte count is reset first
    tables: tuple[tuple[str | None, str], ...]  # (database or None, table) whose shape it may change
    database: str | None = None  # the database a ``USE`` in it switched to
    written: tuple[tuple[str | None, str], ...] = ()  # (database or None, table) its statements write


def rewrite(sql: str, get_lock_function: str) -> Rewritten:
    """``sql`` with each ``BEGIN`` taking its snapshot at once and each ``GET_LOCK(`` calling
    ``get_lock_function`` instead; the text is otherwise unchanged, so a multi-statement text still
    answers one result per statement."""
    if not _KEYWORDS.search(sql):
        return Rewritten(sql, False, ())
    out: list[str] = []
    writes = False
    tables: list[tuple[str | None, str]] = []
    written: list[tuple[str | None, str]] = []
    database = None
    for statement in statements(sql) if ";" in sql else [sql]:
        code = _code(statement)
        if _BEGIN.fullmatch(code):
            out.append(_keep_spacing(statement, CONSISTENT_BEGIN))
            writes = True
            continue
        words = {w.upper() for w in _WORD.findall(code)}
        writes = writes or bool(words & _WRITE_WORDS)
        use = _USE.fullmatch(code)
        if use:
            database = use.group(1) or use.group(2)
        target = _WRITTEN.match(code)
        if target:
            first, second = target.group(1) or target.group(2), target.group(3) or target.group(4)
            written.append((first, second) if second else (None, first))
        ddl = _DDL.match(code)
        if ddl:
            first, second = ddl.group(1) or ddl.group(2), ddl.group(3) or ddl.group(4)
            tables.append((first, second) if second else (None, first))
        out.append(
            _calls_replaced(statement, "GET_LOCK", get_lock_function) if "GET_LOCK" in words else statement
        )
    return Rewritten(";".join(out), writes, tuple(tables), database, tuple(written))


def _code(statement: str) -> str:
    """The statement with its strings and comments blanked (names in backquotes kept)."""
    return "".join(
        p.text if not p.quoted or p.text.startswith("`") else " " * len(p.text) for p in pieces(statement)
    )


def _keep_spacing(statement: str, replacement: str) -> str:
    leading = statement[: len(statement) - len(statement.lstrip())]
    trailing = statement[len(statement.rstrip()) :]
    return leading + replacement + trailing


def _calls_replaced(statement: str, function: str, replacement: str) -> str:
    call = re.compile(rf"(?<![\w$.`]){function}(?=\s*\()", re.IGNORECASE)
    return "".join(p.text if p.quoted else call.sub(replacement, p.text) for p in pieces(statement))
