"""The store: everything blog-api reads and writes in the database, as plain records.

``PeeweeStore(db)`` runs every query against the database it was given (queries are bound to it
explicitly, so two stores on two databases never interfere). Writes that must be all-or-nothing run in
one transaction; connection failures surface as ``function.errors.DatabaseUnavailable`` (retryable).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import peewee

from function.store.backends import unwrap
from function.store.connection import connection
from function.store.deliveries import DeliveryQueries
from function.store.locks import LockQueries
from function.store.reads import ReadQueries
from function.store.reconcile import ReconcileQueries


class PeeweeStore(LockQueries, ReconcileQueries, DeliveryQueries, ReadQueries):
    """The database port of the worker, the CLI and the read routes: users and locks, the reconcile,
    deliveries and the read side, each in its own module."""


@contextlib.contextmanager
def job_store(db: peewee.Database | peewee.DatabaseProxy) -> Iterator[PeeweeStore]:
    """A store on a connection opened for one request or job and closed when the block ends (connect
    and close per job). When this block opened the connection, the store knows the close will release
    its named locks (see ``PeeweeStore``); inside someone else's connection it releases them itself."""
    real = unwrap(db)
    opens_here = real.is_closed()
    with connection(real):
        yield PeeweeStore(real, closes_after_job=opens_here)
