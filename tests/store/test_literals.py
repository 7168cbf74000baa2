"""Parameters written into a statement's text for MySQL/TiDB are exactly what PyMySQL writes, and what
is stored through them reads back byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import peewee
import pytest
from pymysql.converters import escape_string

from function.store.backends import open_database
from function.store.batching import batched_transaction
from function.store.connection import connection
from function.store.literals import escape_text, statement_text

pytestmark = pytest.mark.mysql

AWKWARD = [
    "",
    "plain",
    "quote ' double \" backslash \\ and \\' together",
    "NUL \0 newline \n return \r ctrl-Z \032 tab \t",
    "日本語のテキスト ✨ 🐍 and `code`\n```python\nprint('x')\n```",
    "\\\\n is not a newline",
    "lone surrogate \udc80 stays itself",
    "x" * 100_000 + "'" + "é" * 1000,
]


@pytest.fixture
def mysql_db(mysql_url: str) -> Iterator[peewee.Database]:
    db = open_database(mysql_url)
    with connection(db):
        yield db
    db.close()


@pytest.mark.parametrize("value", AWKWARD)
def test_text_is_escaped_as_pymysql_escapes_it(value: str) -> None:
    assert escape_text(value) == escape_string(value)


def test_a_statement_reads_as_pymysqls_whatever_its_parameters(mysql_db: peewee.Database) -> None:
    sql = "SELECT %s, %s, %s, %s, %s, %s, %s"
    params = [AWKWARD[2], 42, None, True, 1.5, datetime(2026, 12, 4, 17, 0, 1, 5), b"\x00\xff"]
    conn = mysql_db.connection()
    assert statement_text(conn, sql, params) == conn.cursor().mogrify(sql, tuple(params))
    assert statement_text(conn, "SELECT 1", None) == "SELECT 1"


class Statement:
    """A statement with parameters, as a Peewee query gives them (``sql()``)."""

    def __init__(self, sql: str, params: list[object]) -> None:
        self._sql, self._params = sql, params

    def sql(self) -> tuple[str, list[object]]:
        return self._sql, self._params


def test_what_is_written_through_it_reads_back_byte_for_byte(mysql_db: peewee.Database) -> None:
    mysql_db.execute_sql("CREATE TEMPORARY TABLE literal_check (id INT PRIMARY KEY, body LONGTEXT)")
    kept = [v for v in AWKWARD if "\udc80" not in v]  # utf8mb4 cannot store a lone surrogate
    sql = "INSERT INTO literal_check (id, body) VALUES " + ", ".join(["(%s, %s)"] * len(kept))  # noqa: S608 - placeholders only
    with batched_transaction(mysql_db) as tx:
        tx.add(Statement(sql, [p for i, v in enumerate(kept) for p in (i, v)]))
    rows = mysql_db.execute_sql("SELECT body FROM literal_check ORDER BY id").fetchall()
    assert [r[0] for r in rows] == kept
