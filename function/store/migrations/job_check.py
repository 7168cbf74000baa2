"""The check a job makes before it touches the database: is the schema the one this code reads and writes?"""

from __future__ import annotations

import peewee

from function.errors import DatabaseNotInitialised, SchemaBehind, SchemaTooNew
from function.store.backends import unwrap
from function.store.connection import NO_TABLES
from function.store.migrations.steps import SCHEMA_VERSION
from function.store.migrations.version import read_version
from function.store.models import User


def require_current_schema(db: peewee.Database | peewee.DatabaseProxy, needed: int = SCHEMA_VERSION) -> None:
    """Return when the database is at schema version ``needed`` (one SELECT); else refuse the job:

    - SchemaTooNew (permanent) for a database a newer blog-api migrated: this code would write rows that
      version does not expect, and nothing but running that version helps;
    - SchemaBehind (retryable) for an older one: the job passes once someone runs ``blog-api migrate``;
    - DatabaseNotInitialised (retryable) for a database without blog-api tables (``blog-api init-db``).
    """
    real = unwrap(db)
    found = read_version(real)
    if found == needed:
        return
    if found is None:
        # Only on the way to refusing: a database made before schema versions, or none at all?
        if not real.table_exists(User._meta.table_name):
            raise DatabaseNotInitialised(NO_TABLES)
        found = 0
    if found > needed:
        raise SchemaTooNew(needed, found)
    raise SchemaBehind(needed, found)
