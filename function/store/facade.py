"""The store: everything blog-api reads and writes in the database, as plain records.

``PeeweeStore(db)`` runs every query against the database it was given (queries are bound to it
explicitly, so two stores on two databases never interfere). Writes that must be all-or-nothing run in
one transaction; connection failures surface as ``function.errors.DatabaseUnavailable`` (retryable).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import peewee

from function.store.backends import MySQLDatabase, unwrap
from function.store.book_reads import BookReadQueries
from function.store.books import BookQueries
from function.store.connection import close_quietly, connection, translate_errors
from function.store.deliveries import DeliveryQueries
from function.store.locks import LockQueries
from function.store.reads import ReadQueries
from function.store.reconcile import ReconcileQueries


class PeeweeStore(LockQueries, ReconcileQueries, DeliveryQueries, ReadQueries, BookQueries, BookReadQueries):
    """The database port of the worker, the CLI and the read routes: users and locks, the reconcile,
    deliveries and the read side, each in its own module."""


@contextlib.contextmanager
def job_store(db: peewee.Database | peewee.DatabaseProxy, *, keep: bool = False) -> Iterator[PeeweeStore]:
    """A store on a connection opened for one request or job and closed when the block ends (connect
    and close per job). When this block opened the connection, the store knows the close will release
    its named locks (see ``PeeweeStore``); inside someone else's connection it releases them itself.

    ``keep``: the connection stays open after the job for the next one on this thread (a warm Lambda
    invocation saves the TCP, TLS and authentication round trips). The store then releases its named
    locks itself; the connection is closed anyway when the job failed, left a transaction open or
    could not release a lock, so nothing of a job outlives it. A kept connection that died in between
    is replaced on the next job's first statement (``MySQLDatabase.check_first_statement``)."""
    real = unwrap(db)
    if keep:
        with _kept_connection_job(real) as store:
            yield store
        return
    opens_here = real.is_closed()
    with connection(real):
        yield PeeweeStore(real, closes_after_job=opens_here)


_jobs = threading.local()


@contextlib.contextmanager
def _kept_connection_job(real: peewee.Database) -> Iterator[PeeweeStore]:
    store = PeeweeStore(real, closes_after_job=False)
    if getattr(_jobs, "open", False):
        yield store  # inside a job of this thread: the outer block decides about the connection
        return
    if isinstance(real, MySQLDatabase) and not real.is_closed():
        real.check_first_statement(True)
    _jobs.open = True
    done = False
    try:
        with translate_errors():
            real.connect(reuse_if_open=True)
            yield store
        done = True
    finally:
        _jobs.open = False
        if isinstance(real, MySQLDatabase):
            real.check_first_statement(False)
        if not done or real.in_transaction() or store.holds_server_locks():
            close_quietly(real)
