"""Databases as earlier versions of blog-api made them, from the files ``tools/old_database.py`` records
(``tests/fixtures/old-databases/<commit>.json``: each backend's CREATE statements, every row, and what
that version's read routes answered)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import peewee

from function.store.backends import is_mysql, unwrap
from function.store.connection import connection

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "old-databases"
# The first commit of the round that brought schema versions: the newest database made without them.
BEFORE_VERSIONS = "eaf72ea"


@cache
def recorded(commit: str = BEFORE_VERSIONS) -> dict[str, Any]:
    """The recording of ``commit`` (read once)."""
    loaded: dict[str, Any] = json.loads((FOLDER / f"{commit}.json").read_text(encoding="utf-8"))
    return loaded


def make_old_database(
    db: peewee.Database | peewee.DatabaseProxy,
    commit: str = BEFORE_VERSIONS,
    *,
    without_tables: Iterable[str] = (),
    without_columns: Iterable[str] = (),
) -> None:
    """Make on ``db`` (empty) the tables ``commit`` made, with its rows. ``without_tables`` and
    ``without_columns`` (``"table.column"``) are dropped before the rows go in: what a still older
    version made, before those existed."""
    real = unwrap(db)
    snapshot = recorded(commit)
    gone_tables, gone_columns = set(without_tables), set(without_columns)
    quote = "`" if is_mysql(real) else '"'
    with connection(real):
        for statement in snapshot["mysql" if is_mysql(real) else "sqlite"]:
            real.execute_sql(statement)
        # Children before parents (the recording lists parents first).
        for table in reversed(list(snapshot["rows"])):
            if table in gone_tables:
                real.execute_sql(f"DROP TABLE {quote}{table}{quote}")
        for name in sorted(gone_columns):
            table, column = name.split(".")
            real.execute_sql(f"ALTER TABLE {quote}{table}{quote} DROP COLUMN {quote}{column}{quote}")
        for table, rows in snapshot["rows"].items():
            kept = [
                {column: value for column, value in row.items() if f"{table}.{column}" not in gone_columns}
                for row in rows
            ]
            if kept and table not in gone_tables:
                peewee.Table(table, columns=list(kept[0])).insert(kept).bind(real).execute()


# Answers a later version changed on purpose, by field: (the value before, the value it reads as now).
# An article without a description said null; the front end's contract wants a string, so "" now.
CHANGED_ON_PURPOSE: dict[str, tuple[Any, Any]] = {"description": (None, "")}


def assert_serves_as_before(now: Any, before: Any, where: str = "answer") -> None:
    """``now`` says everything ``before`` said, the same way: every key with the same value, lists item by
    item. Keys ``now`` has in addition are fields a later version added to the answer; a value listed in
    ``CHANGED_ON_PURPOSE`` for its field may read as that field's new value."""
    if isinstance(before, dict):
        assert isinstance(now, dict), f"{where}: {now!r} is not an object"
        for key, value in before.items():
            assert key in now, f"{where}.{key} is gone"
            assert_serves_as_before(now[key], value, f"{where}.{key}")
    elif isinstance(before, list):
        assert isinstance(now, list) and len(now) == len(before), f"{where}: {now!r} != {before!r}"
        for index, (item_now, item_before) in enumerate(zip(now, before, strict=True)):
            assert_serves_as_before(item_now, item_before, f"{where}[{index}]")
    else:
        field = where.rsplit(".", 1)[-1]
        if field in CHANGED_ON_PURPOSE and (before, now) == CHANGED_ON_PURPOSE[field]:
            return
        assert now == before, f"{where}: {now!r} != {before!r}"


def as_before_bodies_apart(db: peewee.Database | peewee.DatabaseProxy, *, version: int = 6) -> None:
    """Bring a database this version made back to the shape it had before migration step 7: each
    article's Markdown, HTML and table of contents in its ``articles`` row (nullable: this helper's
    columns; the recordings hold the NOT NULL originals), no ``article_bodies``, and the schema recorded
    at ``version``. A blog synced by today's code, as a version before the step would hold it."""
    from function.store.migrations.version import SchemaVersion, record_version

    real = unwrap(db)
    text = "LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" if is_mysql(real) else "TEXT"
    quote = "`" if is_mysql(real) else '"'
    for column in ("content", "content_html", "toc"):
        real.execute_sql(f"ALTER TABLE articles ADD COLUMN {quote}{column}{quote} {text} NULL")
        body = peewee.Table("article_bodies", ("article_id", column), alias="b")
        key = getattr(body, "article_id")  # noqa: B009  (Peewee makes the columns attributes at run time)
        copied = body.select(getattr(body, column)).where(key == peewee.SQL("articles.id"))
        peewee.Table("articles").update({peewee.Column(peewee.Table("articles"), column): copied}).bind(
            real
        ).execute()
    real.execute_sql("DROP TABLE article_bodies")
    SchemaVersion.delete().where(SchemaVersion.version > version).bind(real).execute()
    if not SchemaVersion.select().where(SchemaVersion.version == version).bind(real).exists():
        record_version(real, version, f"step {version}")
