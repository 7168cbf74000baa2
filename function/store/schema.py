"""The schema's life: creating the tables and indexes that are missing, adding the nullable columns
of later versions, and telling how an existing database differs from what this version needs."""

from __future__ import annotations

import peewee

from function.store.backends import unwrap
from function.store.models import ADDED_COLUMNS, MODELS, BaseModel, Delivery

# Before the retryable column, a record said so by this mark in its error text: the rows that were there
# when ``create_tables`` adds the column get the value their text meant.
LEGACY_RETRYABLE_MARK = "[retryable]"


def create_tables(db: peewee.Database | peewee.DatabaseProxy) -> None:
    """Create every table and index that does not exist yet, and add the ``ADDED_COLUMNS`` an existing
    table lacks (idempotent; no DDL on an up-to-date database)."""
    db = unwrap(db)
    existing = set(db.get_tables())
    for model in MODELS:
        if model._meta.table_name not in existing:
            peewee.SchemaManager(model, db).create_all(safe=True)
    present: dict[str, set[str]] = {}  # one look per table, however many columns it gained
    for column in ADDED_COLUMNS:
        table = column.model._meta.table_name
        if table not in existing:
            continue
        if table not in present:
            present[table] = _column_names(db, column.model)
        if column.column_name not in present[table]:
            _add_column(db, column)
            if column is Delivery.retryable:
                Delivery.update(retryable=True).where(Delivery.error.contains(LEGACY_RETRYABLE_MARK)).bind(
                    db
                ).execute()


def _column_names(db: peewee.Database, model: type[BaseModel]) -> set[str]:
    """The table's columns, from an empty ``SELECT *``: one statement (``get_columns`` takes two on MySQL)."""
    cursor = db.execute(model.select(peewee.SQL("*")).limit(0))
    names = {str(description[0]) for description in cursor.description or ()}
    cursor.fetchall()
    return names


def _add_column(db: peewee.Database, column: peewee.Field) -> None:
    """``ALTER TABLE t ADD COLUMN <the field's own DDL>`` (what playhouse.migrate renders too)."""
    if not column.null:
        raise ValueError("only a nullable column can be added to rows that exist")
    ctx = peewee.SchemaManager(column.model, db)._create_context()  # type: ignore[attr-defined]
    ctx.literal("ALTER TABLE ").sql(peewee.Entity(column.model._meta.table_name))
    ctx.literal(" ADD COLUMN ").sql(column.ddl(ctx))
    db.execute(ctx)


def schema_differences(db: peewee.Database | peewee.DatabaseProxy) -> list[str]:
    """How the existing tables differ from what this version of blog-api reads and writes: a column it
    needs that is missing, or a column it does not know that refuses rows without it (NOT NULL, no
    default). Empty when they agree. Tables that do not exist yet are ``create_tables``' business.

    There is no migration tool yet: apart from the nullable ``ADDED_COLUMNS`` that ``create_tables``
    adds, a database made by an older version is reported, not altered, so that nobody's data is
    changed behind their back."""
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
