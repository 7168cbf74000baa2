"""The size checks of the TiDB-faithful test database: triggers that count what TiDB would write.

TiDB keeps a row as one key-value pair and refuses a pair over ``txn-entry-size-limit`` (6 MiB by
default: error 8025, "entry too large"), and a transaction whose pairs add up to more than
``txn-total-size-limit`` (100 MiB by default: error 8004, "Transaction is too large"). MariaDB has
neither limit. Each table written gets two triggers (after INSERT and after UPDATE)
that estimate, from the row itself, the bytes TiDB would write, and raise TiDB's own error numbers with
``SIGNAL``, so the error reaches the client through the real server and the real driver. They are
installed on a table the first time a statement writes it (creating triggers is slow, and most tables
of a test are never written).

How a row is counted (TiDB's row format v2 and its key encoding, approximately, erring high):

- the row's key: ``t`` + table id + ``_r`` (11 bytes) + the primary key, encoded (9 bytes per number,
  9 per started 8 bytes of text);
- the row's value: a 6-byte header, and per column 5 bytes (its id and offset) plus its value: the
  UTF-8 bytes of text (``LENGTH``), 8 bytes for a number or a time, nothing for NULL;
- each secondary index: one more pair, 19 bytes of prefix, its columns encoded as above, and 10 bytes
  of row handle.

An INSERT writes the row and its index entries. An UPDATE that changes something rewrites the whole row
(TiDB has no partial update of a row: a flag set on an article rewrites its Markdown and HTML) and,
for each index whose columns changed, deletes one entry and writes another; an UPDATE that changes
nothing writes nothing, as in TiDB. A DELETE is not counted: TiDB writes a deletion mark per key (the
key alone, some 20-60 bytes a row and index entry), far below what the limits are about. The
transaction's total is kept in the session variable ``@tidb_txn_bytes``, which
the relay resets before each statement sent outside a transaction; the limits are read from
``@tidb_entry_limit`` and ``@tidb_txn_limit``, which the relay sets likewise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pymysql

ENTRY_LIMIT = 6 * 1024 * 1024  # txn-entry-size-limit's default: 6291456
TXN_LIMIT = 100 * 1024 * 1024  # txn-total-size-limit's default: 104857600

ROW_KEY_PREFIX = 11  # "t" + table id (8) + "_r"
INDEX_KEY_PREFIX = 19  # "t" + table id (8) + "_i" + index id (8)
INDEX_HANDLE = 10  # the row's handle, in the key or the value
ROW_HEADER = 6
COLUMN_OVERHEAD = 5  # column id and offset in row format v2 (erring high)
FIXED_WIDTH = 8  # a number or a time as stored in the value
KEY_NUMBER = 9  # a number or a time in a memcomparable key

_TEXT_TYPES = frozenset(
    {
        "char",
        "varchar",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
        "binary",
        "varbinary",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
        "json",
        "enum",
        "set",
        "decimal",
    }
)

TRIGGER_PREFIX = "tidbmode_"


@dataclass(frozen=True)
class Table:
    """What the checks need of a table: its columns (name, data type) in order, its primary key's
    columns, and its other indexes' columns."""

    database: str
    name: str
    columns: Sequence[tuple[str, str]]
    primary: Sequence[str]
    indexes: Sequence[Sequence[str]]


def trigger_names(table: str) -> tuple[str, str]:
    """The two triggers' names (MariaDB allows 64 characters)."""
    base = table if len(table) <= 40 else table[:24] + "_" + hashlib.sha256(table.encode()).hexdigest()[:12]
    return f"{TRIGGER_PREFIX}ai_{base}", f"{TRIGGER_PREFIX}au_{base}"


def trigger_statements(table: Table, *, replacing: bool) -> list[str]:
    """The statements that install the table's two triggers (``replacing``: dropping earlier ones)."""
    db, name = _quoted(table.database), _quoted(table.name)
    insert, update = trigger_names(table.name)
    types = dict(table.columns)
    drops = [f"DROP TRIGGER IF EXISTS {db}.{_quoted(t)}" for t in (insert, update)] if replacing else []
    return [
        *drops,
        _trigger(db, insert, "INSERT", name, _insert_body(table, types)),
        _trigger(db, update, "UPDATE", name, _update_body(table, types)),
    ]


def _trigger(db: str, trigger: str, event: str, table: str, body: str) -> str:
    head = f"CREATE TRIGGER {db}.{_quoted(trigger)} AFTER {event} ON {db}.{table} FOR EACH ROW"
    return f"{head} BEGIN\n{body}\nEND"


_DECLARE = (
    "  DECLARE entry BIGINT DEFAULT 0;\n  DECLARE indexed BIGINT DEFAULT 0;\n  DECLARE msg VARCHAR(200);\n"
)
_CHECK_ENTRY = (
    f"  IF entry > COALESCE(@tidb_entry_limit, {ENTRY_LIMIT}) THEN\n"
    "    SET msg = CONCAT('entry too large, the max entry size is ',"
    f" COALESCE(@tidb_entry_limit, {ENTRY_LIMIT}), ', the size of data is ', entry);\n"
    "    SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 8025, MESSAGE_TEXT = msg;\n"
    "  END IF;\n"
)
_ADD_TO_TRANSACTION = (
    "  SET @tidb_txn_bytes = COALESCE(@tidb_txn_bytes, 0) + entry + indexed;\n"
    f"  IF @tidb_txn_bytes > COALESCE(@tidb_txn_limit, {TXN_LIMIT}) THEN\n"
    "    SET msg = CONCAT('Transaction is too large, size: ', CAST(@tidb_txn_bytes AS UNSIGNED));\n"
    "    SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 8004, MESSAGE_TEXT = msg;\n"
    "  END IF;"
)


def _insert_body(table: Table, types: Mapping[str, str]) -> str:
    return (
        _DECLARE
        + f"  SET entry = {_entry_bytes(table, types, 'NEW')};\n"
        + f"  SET indexed = {_all_index_bytes(table, types, 'NEW')};\n"
        + _CHECK_ENTRY
        + _ADD_TO_TRANSACTION
    )


def _update_body(table: Table, types: Mapping[str, str]) -> str:
    same = " AND ".join(f"OLD.{_quoted(c)} <=> NEW.{_quoted(c)}" for c, _ in table.columns) or "TRUE"
    moved = [
        f"IF({_unchanged(index)}, 0, 2 * ({_index_bytes(index, types, 'NEW')}))" for index in table.indexes
    ]
    return (
        _DECLARE
        + f"  IF NOT ({same}) THEN\n"
        + f"  SET entry = {_entry_bytes(table, types, 'NEW')};\n"
        + f"  SET indexed = {' + '.join(moved) or '0'};\n"
        + _CHECK_ENTRY
        + _ADD_TO_TRANSACTION
        + "\n  END IF;"
    )


def _unchanged(index: Sequence[str]) -> str:
    return " AND ".join(f"OLD.{_quoted(c)} <=> NEW.{_quoted(c)}" for c in index)


def _entry_bytes(table: Table, types: Mapping[str, str], row: str) -> str:
    values = " + ".join(f"{COLUMN_OVERHEAD} + {_value_bytes(row, c, t)}" for c, t in table.columns)
    return f"{_row_key_bytes(table, types, row)} + {ROW_HEADER} + {values or '0'}"


def _row_key_bytes(table: Table, types: Mapping[str, str], row: str) -> str:
    handle = " + ".join(_key_bytes(row, c, types.get(c, "")) for c in table.primary) or str(KEY_NUMBER)
    return f"{ROW_KEY_PREFIX} + {handle}"


def _all_index_bytes(table: Table, types: Mapping[str, str], row: str) -> str:
    return " + ".join(f"({_index_bytes(index, types, row)})" for index in table.indexes) or "0"


def _index_bytes(index: Sequence[str], types: Mapping[str, str], row: str) -> str:
    keys = " + ".join(_key_bytes(row, c, types.get(c, "")) for c in index)
    return f"{INDEX_KEY_PREFIX} + {INDEX_HANDLE} + {keys}"


def _value_bytes(row: str, column: str, data_type: str) -> str:
    ref = f"{row}.{_quoted(column)}"
    if data_type.lower() in _TEXT_TYPES:
        return f"COALESCE(LENGTH({ref}), 0)"
    return f"IF({ref} IS NULL, 0, {FIXED_WIDTH})"


def _key_bytes(row: str, column: str, data_type: str) -> str:
    ref = f"{row}.{_quoted(column)}"
    if data_type.lower() in _TEXT_TYPES:
        # Memcomparable bytes: groups of 8 bytes, each followed by a marker byte.
        return f"(COALESCE(LENGTH({ref}), 0) DIV 8 + 1) * 9"
    return str(KEY_NUMBER)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read_table(admin: pymysql.connections.Connection[Any], database: str, table: str) -> Table | None:
    """The columns and indexes of ``database.table`` as the checks need them; None when it is gone (or
    is a view)."""
    with admin.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (database, table),
        )
        kind = cursor.fetchone()
        if kind is None or kind[0] != "BASE TABLE":
            return None
        cursor.execute(
            "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
            (database, table),
        )
        columns = [(str(name), str(kind)) for name, kind in cursor.fetchall()]
        cursor.execute(
            "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY INDEX_NAME, SEQ_IN_INDEX",
            (database, table),
        )
        indexes: dict[str, list[str]] = {}
        for index, column in cursor.fetchall():
            indexes.setdefault(str(index), []).append(str(column))
    primary = indexes.pop("PRIMARY", [])
    return Table(database, table, columns, primary, list(indexes.values()))
