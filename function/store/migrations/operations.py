"""What a migration step is handed: the database, Peewee's schema migrator for it, and alterations that
look before they alter.

On MySQL and TiDB every DDL statement commits on its own (there is no transactional DDL), so a step can
stop after some of its statements ran and before its version was recorded: the next ``migrate`` runs the
whole step again. Each alteration here therefore checks the schema first and does only what is missing,
which makes a step written with them safe to run twice. On SQLite the step and its record share one
transaction, and an interrupted step leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable

import peewee
from playhouse.migrate import SchemaMigrator, migrate

from function.store.columns import BaseModel

# An index as the schema knows it: its columns in order, and whether it is unique.
IndexShape = tuple[tuple[str, ...], bool]


class Migration:
    """A step's view of the database (``db``) and of Peewee's ``playhouse.migrate`` (``migrator``)."""

    def __init__(self, db: peewee.Database) -> None:
        self.db = db
        # The one place the backend's migrator is picked: MySQLMigrator (TiDB and MariaDB included) or
        # SqliteMigrator, from the database's class.
        self.migrator = SchemaMigrator.from_database(db)

    def create_missing_tables(self, *models: type[BaseModel]) -> list[str]:
        """Create the tables of ``models`` that do not exist, with their indexes; the tables created.
        (A table that exists is left as it is: ``add_missing_columns`` and ``add_missing_indexes`` bring
        it up to date.)"""
        existing = set(self.db.get_tables())
        created = []
        for model in models:
            if model._meta.table_name not in existing:
                peewee.SchemaManager(model, self.db).create_all(safe=True)
                created.append(model._meta.table_name)
        return created

    def add_missing_columns(self, *fields: peewee.Field) -> list[str]:
        """``ALTER TABLE … ADD COLUMN`` for each field its table lacks (``table.column`` of each added).
        A NOT NULL field needs a default: Peewee adds it nullable, fills the default in, then sets NOT
        NULL. A field whose table does not exist is left to ``create_missing_tables``."""
        existing = set(self.db.get_tables())
        added = []
        for table, table_fields in _by_table(fields).items():
            if table not in existing:
                continue
            present = self.column_names(table)
            for field in table_fields:
                if field.column_name not in present:
                    migrate(self.migrator.add_column(table, field.column_name, field))
                    added.append(f"{table}.{field.column_name}")
        return added

    def add_missing_indexes(self, *models: type[BaseModel]) -> list[str]:
        """Create each index the models declare (a field's ``index``/``unique``, ``Meta.indexes``) that
        their table lacks, compared by columns and uniqueness, named as Peewee names a model's index (the
        names created). An index on a column the table does not have yet is left to the step that adds
        the column (an earlier step runs with this version's models)."""
        existing = set(self.db.get_tables())
        created = []
        for model in models:
            table = model._meta.table_name
            if table not in existing:
                continue
            present = {(tuple(index.columns), bool(index.unique)) for index in self.db.get_indexes(table)}
            columns_now = self.column_names(table)
            for columns, unique in declared_indexes(model):
                if (columns, unique) not in present and set(columns) <= columns_now:
                    migrate(self.migrator.add_index(table, columns, unique))
                    created.append(f"{table}({', '.join(columns)})")
        return created

    def drop_present_columns(self, table: str, *columns: str) -> list[str]:
        """``ALTER TABLE … DROP COLUMN`` for each of ``columns`` that ``table`` still has (the
        ``table.column`` of each dropped). SQLite 3.35 and later drop a column in place; a column in an
        index or a key cannot be dropped so, and none of the store's dropped columns is."""
        if table not in set(self.db.get_tables()):
            return []
        present = self.column_names(table)
        dropped = []
        for column in columns:
            if column in present:
                # No CASCADE: MySQL/TiDB have nothing to cascade to, and TiDB's grammar has no such word.
                migrate(self.migrator.drop_column(table, column, cascade=False))
                dropped.append(f"{table}.{column}")
        return dropped

    def drop_index_on(self, table: str, columns: tuple[str, ...]) -> list[str]:
        """Drop the secondary index of ``table`` over exactly ``columns`` (in order), if there is one
        (the names of those dropped)."""
        if table not in set(self.db.get_tables()):
            return []
        names = [index.name for index in self.db.get_indexes(table) if tuple(index.columns) == columns]
        for name in names:
            migrate(self.migrator.drop_index(table, name))
        return names

    def drop_present_tables(self, *models: type[BaseModel]) -> list[str]:
        """``DROP TABLE`` the table of each of ``models`` that exists (the names of those dropped)."""
        existing = set(self.db.get_tables())
        dropped = []
        for model in models:
            if model._meta.table_name in existing:
                peewee.SchemaManager(model, self.db).drop_table(safe=True)
                dropped.append(model._meta.table_name)
        return dropped

    def commit_round(self) -> None:
        """End a round of a step that copies data in rounds. MySQL/TiDB: commit what it wrote and begin
        again, so no transaction grows past one round (TiDB refuses one over ``txn-total-size-limit``)
        and a step stopped half-way keeps the rounds it did. SQLite: nothing; the step is one
        transaction with its record, and an interrupted step leaves nothing behind."""
        if isinstance(self.db, peewee.SqliteDatabase):
            return
        self.db.commit()
        self.db.begin()

    def column_names(self, table: str) -> set[str]:
        """The columns ``table`` has now."""
        return {column.name for column in self.db.get_columns(table)}


def declared_indexes(model: type[BaseModel]) -> list[IndexShape]:
    """The secondary indexes ``model`` declares, as (columns, unique): the primary key is the table's own."""
    meta = model._meta
    shapes: list[IndexShape] = [
        ((field.column_name,), bool(field.unique))
        for field in meta.sorted_fields
        if (field.index or field.unique) and not field.primary_key
    ]
    for entry in meta.indexes:
        if not isinstance(entry, tuple | list):
            raise TypeError(f"{meta.table_name}: only (field names, unique) indexes can be migrated")
        names, unique = entry
        shapes.append((tuple(meta.fields[name].column_name for name in names), bool(unique)))
    return shapes


def _by_table(fields: Iterable[peewee.Field]) -> dict[str, list[peewee.Field]]:
    grouped: dict[str, list[peewee.Field]] = {}
    for field in fields:
        grouped.setdefault(field.model._meta.table_name, []).append(field)
    return grouped
