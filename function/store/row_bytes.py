"""What a stored row weighs, measured by the database: the bytes a transaction writes when it rewrites
the row whole.

TiDB has no partial update of a row: setting a flag (archiving an article) or copying a row writes every
column again, and the transaction's size (``txn-total-size-limit``, 100 MiB by default) counts it all.
The sync knows the size of what it writes from the files it read, but not of the rows it only archives
or copies: those are measured here, in the one statement that reads them anyway, so the work can be cut
by bytes before it is sent.
"""

from __future__ import annotations

from typing import Any

import peewee

from function.store.backends import is_mysql

# A column that holds no text (a number, a time, a flag) as TiDB stores it, with its header: erring high.
FIXED_COLUMN_BYTES = 16


def row_bytes_of(db: peewee.Database, model: type[peewee.Model]) -> Any:
    """A SQL expression of the bytes of ``model``'s row: its text columns' bytes (UTF-8 as stored),
    ``FIXED_COLUMN_BYTES`` for each other column. Built from the model's fields, so a column added or
    moved elsewhere is counted as it is."""
    fields = model._meta.sorted_fields  # Peewee's documented model metadata
    texts = [field for field in fields if isinstance(field, (peewee.CharField, peewee.TextField))]
    fixed = (len(fields) - len(texts)) * FIXED_COLUMN_BYTES
    total: Any = peewee.Value(fixed)
    for field in texts:
        total = total + peewee.fn.COALESCE(_byte_length(db, field), 0)
    return total


def _byte_length(db: peewee.Database, field: peewee.Field) -> Any:
    if is_mysql(db):
        return peewee.fn.LENGTH(field)  # bytes on MySQL/TiDB (CHAR_LENGTH counts characters)
    return peewee.fn.LENGTH(field.cast("BLOB"))  # SQLite's LENGTH of text counts characters
