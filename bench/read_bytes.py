"""What a push and a read cost the database in bytes read, on a real-shaped blog (``real_corpus``).

TiDB stores a row as one key-value pair: a statement that reads any column of a row reads the whole row,
and TiDB Cloud charges Request Units by the bytes its storage reads (one RU per 64 KiB). MariaDB keeps
large TEXT off-page and hides this, so the bench estimates it, statement by statement:

- *Rows read*: each statement the path sent (recorded at the Peewee level, values included) is run again
  under MariaDB's ``ANALYZE FORMAT=JSON``, which executes it and reports, for every table it accessed,
  the rows it actually read (``r_loops`` times ``r_rows``) and whether it read only an index
  (``using_index``). A row read from a table is charged that table's average whole-row size (the sum of
  its columns' lengths, measured on the same data), as TiDB reads the row's one key-value pair; a row
  read from an index alone is charged the average size of the index's key columns. Writes are charged
  nothing here: a no-change push writes only its delivery record.
- *Result bytes*: what the server sent back, counted by the latency relay (``bench.latency_relay``).
- *RU*: rows-read bytes / 64 KiB, TiDB Cloud's read price (request and CPU charges left out).

Cases, after a first sync (not measured): a push that changes no article; a list page (the first page
of ``/articles``); one article's page.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import peewee

from bench import real_corpus
from bench.ours import run_push
from bench.reads import _getter
from bench.rig import USER, Rig
from function.store.backends import Batch, open_database, unwrap
from function.store.connection import connection
from tests.kit.github_fixtures import GitHubClientParts

RU_BYTES = 64 * 1024
BODY_TABLE = "article_bodies"
NO_CHANGE_PUSH = "bytes: no-change push"
LIST_PAGE = "bytes: list page"
ONE_ARTICLE = "bytes: one article"


@dataclass(frozen=True)
class StatementCost:
    sql: str
    rows_read: int
    bytes_read: int
    tables: tuple[str, ...]
    body_rows: int = 0


@dataclass
class ByteCase:
    case: str
    n: int
    statements: list[StatementCost] = field(default_factory=list)
    result_bytes: int = 0  # what the server sent back, through the relay

    @property
    def bytes_read(self) -> int:
        return sum(s.bytes_read for s in self.statements)

    @property
    def request_units(self) -> float:
        return self.bytes_read / RU_BYTES

    @property
    def body_rows_read(self) -> int:
        """Rows of ``article_bodies`` its statements read (0 for anything but an article's page and
        the feed)."""
        return sum(s.body_rows for s in self.statements)


def measure(rig: Rig, parts: GitHubClientParts, n: int) -> list[ByteCase]:
    """First-sync a real-shaped repository of ``n`` articles, then measure the three cases on it."""
    repository = f"octo/bytes-{n}"
    name = f"bench_bytes_{n}"
    rig.github.set_files(real_corpus.repository(n), repo=repository)
    rig.fresh_database(name, repository)
    db = open_database(rig.relayed_url(name))
    direct = open_database(rig.direct_url(name))
    try:
        run_push(rig, parts.source, db, repository, "bytes-first")
        with connection(direct):
            sizes = _TableSizes(direct)
            cases = []
            rig.github.update_files({"README.md": b"# touched\n"}, repo=repository)
            with _recorded(db) as sent:
                rig.relay.reset()
                run_push(rig, parts.source, db, repository, "bytes-no-change")
                relayed = rig.relay.stats.bytes_down
            cases.append(_costed(NO_CHANGE_PUSH, n, sent, relayed, direct, sizes))
            get = _getter(rig, db, name)
            get(f"/users/{USER}/articles")  # warm: the app's first request reads its settings
            for case, path in (
                (LIST_PAGE, f"/users/{USER}/articles"),
                (ONE_ARTICLE, f"/users/{USER}/articles/{real_corpus.slug(7 % n)}"),
            ):
                with _recorded(db) as sent:
                    rig.relay.reset()
                    get(path)
                    relayed = rig.relay.stats.bytes_down
                cases.append(_costed(case, n, sent, relayed, direct, sizes))
    finally:
        db.close()
        direct.close()
        rig.drop_database(name)
    return cases


@contextlib.contextmanager
def _recorded(db: peewee.Database) -> Iterator[list[tuple[str, Any]]]:
    """Every statement ``db`` sends while the block runs, with its values: (SQL, params)."""
    real = unwrap(db)
    sent: list[tuple[str, Any]] = []

    def hook(event: Any) -> None:
        if isinstance(event.params, Batch):
            sent.extend((sql, None) for sql in event.params.statements)
        else:
            sent.append((event.sql, event.params))

    real.query_hooks.append(hook)
    try:
        yield sent
    finally:
        real.query_hooks.remove(hook)


def _costed(
    case: str,
    n: int,
    sent: list[tuple[str, Any]],
    relayed: int,
    direct: peewee.Database,
    sizes: _TableSizes,
) -> ByteCase:
    result = ByteCase(case, n, result_bytes=relayed)
    cursor = direct.connection().cursor()
    for sql, params in sent:
        text = cursor.mogrify(sql, params) if params else sql
        if not text.lstrip().upper().startswith("SELECT") or "GET_LOCK" in text.upper():
            continue
        result.statements.append(_cost(direct, text, sizes))
    return result


def _cost(db: peewee.Database, sql: str, sizes: _TableSizes) -> StatementCost:
    """Run ``sql`` under ``ANALYZE FORMAT=JSON`` and charge the rows it read (see the module's notes)."""
    # ``sql`` is complete (values already in it); PyMySQL still reads ``%`` as a placeholder.
    plan = json.loads(db.execute_sql(f"ANALYZE FORMAT=JSON {sql}".replace("%", "%%")).fetchone()[0])
    rows = charged = bodies = 0
    tables = []
    # The plan names a table by its alias (Peewee's ``t1``): the statement says which table it is.
    aliases = {alias: table for table, alias in re.findall(r"`(\w+)` AS `(\w+)`", sql)}
    for access in _accesses(plan):
        table = aliases.get(str(access["table_name"]), str(access["table_name"]))
        if access.get("access_type") in ("const", "system"):
            # A lookup by a unique key, done while the statement was planned: one row (no r_rows).
            read = 1 if access.get("rows") else 0
        else:
            read = round(float(access.get("r_loops") or 0) * float(access.get("r_rows") or 0))
        if table.startswith("<") or read == 0:
            continue  # a derived table or a subquery's result: its own accesses are counted
        each = (
            sizes.index_entry(table, access.get("used_key_parts", ()))
            if access.get("using_index")
            else sizes.row(table)
        )
        rows, charged = rows + read, charged + read * each
        bodies += read if table == BODY_TABLE else 0
        tables.append(table)
    return StatementCost(sql[:200], rows, charged, tuple(tables), bodies)


def _accesses(node: Any) -> Iterator[dict[str, Any]]:
    """Every table access in an ``ANALYZE FORMAT=JSON`` plan, however nested."""
    if isinstance(node, dict):
        if "table_name" in node:
            yield node
        for value in node.values():
            yield from _accesses(value)
    elif isinstance(node, list):
        for item in node:
            yield from _accesses(item)


class _TableSizes:
    """The average bytes of a whole row, and of each column, of the tables a statement may read."""

    def __init__(self, db: peewee.Database) -> None:
        self._db = db
        self._columns: dict[str, dict[str, float]] = {}

    def row(self, table: str) -> int:
        return round(sum(self._of(table).values())) + 16  # the key and the row's header

    def index_entry(self, table: str, key_parts: Any) -> int:
        columns = self._of(table)
        return round(sum(columns.get(str(part), 8.0) for part in key_parts or ())) + 16

    def _of(self, table: str) -> dict[str, float]:
        """Each column's average stored bytes: text as its UTF-8 length, numbers and times at the fixed
        width TiDB's row format gives them (a DATETIME is 8 bytes, not its 26 characters)."""
        if table not in self._columns:
            types = dict(
                self._db.execute_sql(
                    "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s",
                    (table,),
                ).fetchall()
            )
            texts = [name for name, kind in types.items() if kind not in _FIXED_BYTES]
            lengths = ", ".join(f"AVG(COALESCE(LENGTH(`{name}`), 0))" for name in texts) or "0"
            row = self._db.execute_sql(f"SELECT {lengths} FROM `{table}`").fetchone()  # noqa: S608
            sizes = {name: float(value or 0) for name, value in zip(texts, row, strict=False)}
            sizes.update({name: _FIXED_BYTES[kind] for name, kind in types.items() if kind in _FIXED_BYTES})
            self._columns[table] = sizes
        return self._columns[table]


# Bytes of a value of these types in TiDB's row format.
_FIXED_BYTES = {
    "tinyint": 1.0,
    "smallint": 2.0,
    "int": 4.0,
    "bigint": 8.0,
    "datetime": 8.0,
    "timestamp": 8.0,
    "double": 8.0,
    "float": 4.0,
}
