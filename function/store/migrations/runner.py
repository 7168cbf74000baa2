"""Running the steps: under a named lock, each step a database has not recorded, once, in order, each
recorded in the transaction it ran in."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import peewee

from function.errors import LockTimeout, SchemaTooNew
from function.store.backends import is_mysql, unwrap
from function.store.connection import connection
from function.store.locks import server_lock_name
from function.store.migrations.operations import Migration
from function.store.migrations.steps import STEPS, Step
from function.store.migrations.version import create_version_table, read_version, record_version
from function.store.models import MODELS

log = logging.getLogger(__name__)

# How long a second migrator waits for the first one's lock. Below the connection's read time-out (30 s by
# default), which would otherwise end the wait as a lost connection.
LOCK_WAIT_S = 20.0


@dataclass(frozen=True)
class MigrationReport:
    """What ``migrate`` did: the version before (None: the database had no blog-api tables, and they were
    created at ``after``; 0: made before schema versions), the version after, the steps that ran."""

    before: int | None
    after: int
    applied: tuple[tuple[int, str], ...] = ()

    def lines(self) -> list[str]:
        """The report as an operator reads it, a line each."""
        if self.before is None:
            return [f"created the tables at schema version {self.after}"]
        if not self.applied:
            return [f"schema version {self.after}: up to date"]
        return [
            f"migrated the schema from version {self.before} to {self.after}:",
            *(f"  {number}. {name}" for number, name in self.applied),
        ]


def migrate(
    db: peewee.Database | peewee.DatabaseProxy,
    steps: Sequence[Step] = STEPS,
    *,
    lock_wait_s: float = LOCK_WAIT_S,
) -> MigrationReport:
    """Bring ``db`` to the last of ``steps``, in place: a database without blog-api tables gets this
    version's tables and the last number at once (the models are this version's schema; steps only ever
    change databases that exist); an earlier one runs each step it has not recorded. Idempotent: on an
    up-to-date database it reads the version and stops.

    On MySQL/TiDB the whole run holds a named server lock (``GET_LOCK``), so two migrators never run a
    step at once; the second waits up to ``lock_wait_s``, then finds the work done. Raises SchemaTooNew
    for a database a newer version migrated, LockTimeout when the lock stays taken."""
    real = unwrap(db)
    last = steps[-1][0]
    with connection(real), _migration_lock(real, lock_wait_s):
        before = read_version(real)
        if before is None and not _has_blog_tables(real):
            _create_tables(real, last)
            log.info("Created the tables", extra={"schema_version": last})
            return MigrationReport(None, last)
        found = before or 0
        if found > last:
            raise SchemaTooNew(last, found)
        if before is None:
            create_version_table(real)  # a database made before schema versions
        applied = []
        for number, name, step in steps:
            if number <= found:
                continue
            with _step_transaction(real):
                # Another migrator may have run it meanwhile (on SQLite, which has no named lock, another
                # process): the write lock this transaction holds makes the answer final.
                if (read_version(real) or 0) >= number:
                    continue
                step(Migration(real))
                record_version(real, number, name)
            log.info("Ran a migration step", extra={"schema_version": number, "step": name})
            applied.append((number, name))
        return MigrationReport(found, last, tuple(applied))


def _create_tables(db: peewee.Database, version: int) -> None:
    """This version's tables on a database that has none, recorded as ``version``. On MySQL/TiDB a run that
    stopped half-way leaves tables without a version: the next run takes the database for one made
    before versions, and the steps add whatever is missing."""
    with _step_transaction(db):
        if read_version(db) is not None:
            return  # SQLite: another process created them while this one waited for the write lock
        for model in MODELS:
            peewee.SchemaManager(model, db).create_all(safe=True)
        create_version_table(db)
        record_version(db, version, f"new database at version {version}")


def _has_blog_tables(db: peewee.Database) -> bool:
    return bool({model._meta.table_name for model in MODELS} & set(db.get_tables()))


def _step_transaction(db: peewee.Database) -> AbstractContextManager[object]:
    """A step's transaction. SQLite: ``BEGIN IMMEDIATE``, the database's write lock, taken before the
    version is read again. MySQL/TiDB: a plain transaction (its DDL commits on its own anyway; the named
    lock keeps other migrators out)."""
    if isinstance(db, peewee.SqliteDatabase):
        return db.atomic("IMMEDIATE")
    return db.atomic()


@contextlib.contextmanager
def _migration_lock(db: peewee.Database, wait_s: float) -> Iterator[None]:
    """The named server lock of migrations on MySQL/TiDB, held on this connection for the block; nothing on
    SQLite (``_step_transaction`` takes its write lock)."""
    if not is_mysql(db):
        yield
        return
    name = server_lock_name(str(db.database), "migrate")
    row = db.execute_sql("SELECT GET_LOCK(%s, %s)", (name, max(wait_s, 0))).fetchone()
    if not row or row[0] != 1:
        raise LockTimeout(
            f"another `blog-api migrate` holds the migration lock of this database (waited {wait_s:g} s): "
            "run it again once that one has finished"
        )
    try:
        yield
    finally:
        try:
            db.execute_sql("SELECT RELEASE_LOCK(%s)", (name,))
        except peewee.PeeweeException as exc:
            # The connection is gone, and the server released the lock with it.
            log.warning("Releasing the migration lock failed", extra={"error": str(exc)})
