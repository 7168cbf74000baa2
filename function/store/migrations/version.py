"""The ``schema_version`` table: one row per migration step that ran (or that a new database was created
past), so the database's version is the highest number in it."""

from __future__ import annotations

import peewee

from function.store.columns import BaseModel, StringField, UtcDateTimeField, utc_now
from function.store.connection import is_missing_table


class SchemaVersion(BaseModel):
    version = peewee.IntegerField(primary_key=True)
    name = StringField(max_length=200)
    applied_at = UtcDateTimeField(default=utc_now)

    class Meta:
        table_name = "schema_version"


def read_version(db: peewee.Database) -> int | None:
    """The database's schema version: the highest step recorded, 0 when the table is there but empty (a
    migration of a database made before versions stopped after making it); None without the table.
    One statement."""
    try:
        row = SchemaVersion.select(peewee.fn.MAX(SchemaVersion.version)).bind(db).tuples().first()
    except peewee.DatabaseError as exc:
        if is_missing_table(exc):
            return None
        raise
    return int(row[0]) if row and row[0] is not None else 0


def create_version_table(db: peewee.Database) -> None:
    """``CREATE TABLE IF NOT EXISTS schema_version``."""
    peewee.SchemaManager(SchemaVersion, db).create_all(safe=True)


def record_version(db: peewee.Database, version: int, name: str) -> None:
    """Record that step ``version`` ran (or is satisfied)."""
    SchemaVersion.insert(version=version, name=name[:200]).bind(db).execute()
