"""The numbered migration steps, in order: the one list to extend when the schema changes.

A step is a function of a ``Migration`` (the database, Peewee's ``playhouse.migrate`` migrator for it, and
alterations that look before they alter). ``migrate`` runs each step a database has not recorded, in
order, and records it; a new database is created from the models at ``SCHEMA_VERSION`` without running
them. Adding a step (docs/development.md, "Add a migration step"): change the model, write a function
below that brings an existing database to it, append ``(next number, "what it does", function)``.

A step must be safe to run again after it stopped half-way: on MySQL/TiDB its DDL commits statement by
statement, before its version is recorded. Use the ``Migration`` methods (they check first), and write
data changes so that running them twice leaves what running them once does. Never edit a step that has
shipped: databases out there have recorded it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import peewee

from function.store.models import (
    Article,
    ArticleTag,
    Asset,
    AssetReference,
    Book,
    BookChapter,
    Delivery,
    FailedBook,
    FailedFile,
    HookAttempt,
    HookEndpoint,
    HookEvent,
    ServerKey,
    SweepState,
    Tag,
    User,
)

if TYPE_CHECKING:
    # Only for the steps' annotations: the job's version check reads SCHEMA_VERSION from here without
    # loading playhouse.migrate.
    from function.store.migrations.operations import Migration

Step = tuple[int, str, Callable[["Migration"], None]]


def baseline(m: Migration) -> None:
    """A database made by a version before schema versions, brought to version 1: the tables it lacks,
    the nullable columns later versions added to existing tables (what ``init-db`` used to add), and
    any index it lacks."""
    tables = (
        User,
        Tag,
        Article,
        ArticleTag,
        FailedFile,
        Delivery,
        SweepState,
        HookEndpoint,
        HookEvent,
        HookAttempt,
        Asset,
        AssetReference,
        ServerKey,
        Book,
        BookChapter,
        FailedBook,
    )
    m.create_missing_tables(*tables)
    m.add_missing_columns(
        User.repository_id,
        Delivery.written,
        Delivery.unchanged,
        Article.emoji,
        Article.toc,
        Delivery.retryable,
        User.github_account_id,
        Book.cover_url,
    )
    m.add_missing_indexes(*tables)


# How a delivery record's error text marked a failure that may pass on a retry, before the record had a
# column for it. Only this step still knows it.
_OLD_RETRYABLE_MARK = "[retryable]"


def retryable_mark_to_column(m: Migration) -> None:
    """Deliveries whose error text carries the old ``[retryable]`` mark: ``retryable`` true, mark removed
    from the text (one UPDATE; a second run finds no mark)."""
    mark = _OLD_RETRYABLE_MARK
    text = peewee.fn.REPLACE(peewee.fn.REPLACE(Delivery.error, f" {mark}", ""), mark, "")
    (
        Delivery.update(retryable=True, error=peewee.fn.NULLIF(text, ""))
        .where(peewee.fn.INSTR(Delivery.error, mark) > 0)
        .bind(m.db)
        .execute()
    )


STEPS: tuple[Step, ...] = (
    (1, "baseline: the tables, columns and indexes of earlier versions", baseline),
    (2, "deliveries: the error text's retryable mark into the retryable column", retryable_mark_to_column),
)

# The schema version this code reads and writes: the last step's number.
SCHEMA_VERSION = STEPS[-1][0]
