"""The column types every table uses, and the base model: naive UTC times with microseconds, utf8mb4 text
on MySQL, keys compared byte-exact (see ``function.store.models``). Declared here, apart from the tables,
so that a module of tables of its own (``from function.store.columns import BaseModel, ...``) needs
nothing of ``models`` and ``models`` may list its tables without an import cycle.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import peewee


def utc_now() -> datetime:
    """Now as naive UTC, the form every timestamp column stores."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_naive_utc(value: datetime) -> datetime:
    """``value`` as naive UTC: aware times are converted, naive ones are taken to be UTC already."""
    if value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def _is_mysql_ddl(ctx: Any) -> bool:
    # Only the MySQL family quotes identifiers with backticks; the context carries no other
    # backend marker, and this works for any MySQLDatabase (TiDB included), not only ours.
    return bool(ctx is not None and ctx.state.quote == "``")


class _Utf8Mixin:
    """Declares ``CHARACTER SET utf8mb4`` (and a collation) on MySQL; plain type on SQLite."""

    binary = False

    def ddl_datatype(self, ctx: Any) -> Any:
        datatype = super().ddl_datatype(ctx)  # type: ignore[misc]
        if not _is_mysql_ddl(ctx):
            return datatype
        collation = "utf8mb4_bin" if self.binary else "utf8mb4_unicode_ci"
        return peewee.NodeList((datatype, peewee.SQL(f"CHARACTER SET utf8mb4 COLLATE {collation}")))


class TextKeyField(_Utf8Mixin, peewee.CharField):
    """VARCHAR compared byte-exact (utf8mb4_bin on MySQL; SQLite's default is already binary)."""

    binary = True


class TextKeyReference(_Utf8Mixin, peewee.ForeignKeyField):
    """A foreign key to a TextKeyField: MySQL refuses one whose character set or collation differs
    from the referenced column's (errno 150), and Peewee would give it the server's default."""

    binary = True


class StringField(_Utf8Mixin, peewee.CharField):
    """VARCHAR in utf8mb4."""


class LongTextField(_Utf8Mixin, peewee.TextField):
    """LONGTEXT on MySQL (TEXT stops at 64 KB); TEXT affinity on SQLite."""

    field_type = "LONGTEXT"


class LongBlobField(peewee.BlobField):
    """LONGBLOB on MySQL (BLOB stops at 64 KB, on TiDB too); BLOB on SQLite."""

    def ddl_datatype(self, ctx: Any) -> Any:
        if _is_mysql_ddl(ctx):
            return peewee.SQL("LONGBLOB")
        return super().ddl_datatype(ctx)


class Utf8TextField(_Utf8Mixin, peewee.TextField):
    """TEXT in utf8mb4."""


class UtcDateTimeField(peewee.DateTimeField):
    """Naive UTC with microseconds: DATETIME(6) on MySQL; a fixed-width text form on SQLite, so that
    comparing and ordering the stored strings is comparing the times."""

    def get_modifiers(self) -> list[int]:
        return [6]

    def db_value(self, value: Any) -> Any:
        if isinstance(value, datetime):
            return to_naive_utc(value).strftime("%Y-%m-%d %H:%M:%S.%f")
        return super().db_value(value)


class BaseModel(peewee.Model):
    class Meta:
        # No global database: every query is bound to the store's database explicitly (``.bind(db)``),
        # so two stores on two databases (tests, the benchmark's baseline) never interfere.
        database = None
        legacy_table_names = False
