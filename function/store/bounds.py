"""How big one statement may be on the database at hand, and the one helper that splits work to fit.

Every statement whose size grows with the number of articles, tags, tag sets, paths or files is cut
into pieces that stay inside the backend's limits, read from the database at run time where it can say:

- SQLite: host parameters per statement (``SQLITE_LIMIT_VARIABLE_NUMBER``: 999 before 3.32, 32,766
  since, often raised by distributions) and SELECTs per compound statement
  (``SQLITE_LIMIT_COMPOUND_SELECT``, 500; multi-row VALUES are not counted against it). No condition
  grows with the data (``IN`` lists are flat), so the expression depth (1,000) and the parser's stack
  stay far away: an OR of one nested term per tag set is what once overflowed them.
- MySQL/TiDB/MariaDB: PyMySQL escapes values into the text, so parameters have no limit of their own;
  the text does (``max_allowed_packet``: 4 MiB on MySQL 5.7, 16 MiB on MariaDB, 64 MiB on MySQL 8 and
  TiDB), and a transaction's statements travel in one packet of at most ``BATCH_MAX_BYTES`` (4 MiB).
  So every statement carries at most ``STATEMENT_MAX_BYTES`` of values; one row larger than that (a
  very long article) goes alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import peewee

T = TypeVar("T")

# Values per statement: half a round trip's packet (``BATCH_MAX_BYTES``), so two statements share one.
STATEMENT_MAX_BYTES = 2 * 1024 * 1024
# SELECTs joined by UNION ALL per statement (the tag rewrite's pairs): below SQLite's compound limit
# (500) and small enough that one statement is a few milliseconds of work on the server.
MAX_TERMS = 100
# MySQL's binary protocol caps a prepared statement at 65,535 parameters; PyMySQL does not prepare, but
# a bound keeps statements of small rows (keys, tag paths) to a few hundred KB.
MYSQL_MAX_PARAMETERS = 65_535
# SQLite before 3.32 (and the floor when nothing can be read).
SQLITE_OLD_MAX_PARAMETERS = 999
SQLITE_MAX_PARAMETERS = 32_766
_SQLITE_DEFAULT_COMPOUND_SELECT = 500


@dataclass(frozen=True)
class StatementLimits:
    """The most one statement may carry."""

    parameters: int  # host parameters (``?``)
    terms: int  # SELECTs joined by UNION ALL
    statement_bytes: int = STATEMENT_MAX_BYTES

    def keys(self, reserved: int = 1) -> int:
        """Keys per ``IN (...)`` list when ``reserved`` other parameters share the statement."""
        return max(self.parameters - reserved, 1)

    def rows(self, columns: int, reserved: int = 0) -> int:
        """Rows per multi-row INSERT of ``columns`` values each."""
        return max((self.parameters - reserved) // max(columns, 1), 1)


def sqlite_limits(connection: Any) -> StatementLimits:
    """The limits of this SQLite connection, as the library reports them (Python 3.11+:
    ``Connection.getlimit``), else from its version."""
    getlimit = getattr(connection, "getlimit", None)
    if getlimit is not None:
        parameters = int(getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
        compound = int(getlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT))
    else:
        new = sqlite3.sqlite_version_info >= (3, 32, 0)
        parameters = SQLITE_MAX_PARAMETERS if new else SQLITE_OLD_MAX_PARAMETERS
        compound = _SQLITE_DEFAULT_COMPOUND_SELECT
    # 0 means "no limit" to SQLite.
    return StatementLimits(parameters=max(parameters, 1), terms=max(min(MAX_TERMS, compound or MAX_TERMS), 1))


MYSQL_LIMITS = StatementLimits(parameters=MYSQL_MAX_PARAMETERS, terms=MAX_TERMS)


def limits_of(db: peewee.Database) -> StatementLimits:
    """The limits of ``db``'s connection on this thread (connected by the caller)."""
    if isinstance(db, peewee.SqliteDatabase):
        return sqlite_limits(db.connection())
    return MYSQL_LIMITS


Weigh = Callable[[T], int]


def groups(
    items: Sequence[T],
    *,
    max_items: int,
    weights: Sequence[tuple[Weigh[T], int]] = (),
) -> Iterator[list[T]]:
    """Consecutive groups of ``items``, in order, each with at most ``max_items`` items and, for each
    ``(weigh, most)`` of ``weights``, a total weight of at most ``most`` (parameters, bytes...).
    An item that alone weighs more than a bound is a group of its own: it cannot be split here, and
    refusing it would lose it (callers split such items first when they can)."""
    group: list[T] = []
    totals = [0] * len(weights)
    limit = max(max_items, 1)
    for item in items:
        item_weights = [weigh(item) for weigh, _ in weights]
        bounds = [most for _, most in weights]
        full = len(group) >= limit or any(
            total + weight > most for total, weight, most in zip(totals, item_weights, bounds, strict=True)
        )
        if group and full:
            yield group
            group, totals = [], [0] * len(weights)
        group.append(item)
        totals = [total + weight for total, weight in zip(totals, item_weights, strict=True)]
    if group:
        yield group


def value_bytes(value: Any) -> int:
    """About what a value costs in a statement's text (quoted and escaped on MySQL)."""
    if isinstance(value, str):
        return len(value.encode()) + 3
    if isinstance(value, bytes):
        return 2 * len(value) + 3
    return 24


def row_bytes(row: Any) -> int:
    """About what a row of values (a dict) costs in a multi-row INSERT."""
    return sum(value_bytes(v) for v in row.values()) + 4
