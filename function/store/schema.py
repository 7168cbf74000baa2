"""The schema as a whole: this version's tables on a database (``create_tables``, through the migrations),
and how an existing database still differs from what this version reads and writes."""

from __future__ import annotations

import peewee

from function.store.backends import unwrap
from function.store.migrations.runner import migrate
from function.store.models import MODELS


def create_tables(db: peewee.Database | peewee.DatabaseProxy) -> None:
    """This version's tables: created on a database without them, or an earlier database migrated to
    them (``function.store.migrations.migrate``, which says what it did). Idempotent."""
    migrate(db)


def schema_differences(db: peewee.Database | peewee.DatabaseProxy) -> list[str]:
    """How the existing tables differ from what this version of blog-api reads and writes: a column it
    needs that is missing, or a column it does not know that refuses rows without it (NOT NULL, no
    default). Empty when they agree. Tables that do not exist yet are not reported.

    After ``migrate`` this is empty for every database an earlier blog-api made; what remains was made
    by hand or by a version the migration steps do not know, and is reported, not altered, so that
    nobody's data is changed behind their back."""
    db = unwrap(db)
    existing = set(db.get_tables())
    differences = []
    for model in MODELS:
        table = model._meta.table_name
        if table not in existing:
            continue
        wanted = {field.column_name for field in model._meta.sorted_fields}
        present = {column.name: column for column in db.get_columns(table)}
        for name in sorted(wanted - present.keys()):
            differences.append(f"{table}.{name} is missing")
        for name in sorted(present.keys() - wanted):
            column = present[name]
            if not column.null and column.default is None and not column.primary_key:
                differences.append(f"{table}.{name} is not known to this version and is NOT NULL")
    return differences
