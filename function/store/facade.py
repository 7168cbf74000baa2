"""The store: everything blog-api reads and writes in the database, as plain records.

``PeeweeStore(db)`` runs every query against the database it was given (queries are bound to it
explicitly, so two stores on two databases never interfere). It is composed of one part per concern,
each its own object on one ``Session``: ``users``, ``locks``, ``reconcile``, ``deliveries``, ``reads``,
``search`` (the lexical index's queries), ``hooks`` (the outgoing webhooks), ``sweep_state``,
``books`` and ``book_reads`` (Zenn books), and ``dates`` (publication dates from a repository's
history):
callers name the part (``store.users.get_user(name)``). Writes that must be all-or-nothing run in
one transaction; connection failures surface as ``function.errors.DatabaseUnavailable`` (retryable). How
long a connection lives is decided in ``function.store.connection`` alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import peewee

from function.store.base import session_of
from function.store.book_reads import BookReadQueries
from function.store.books import BookQueries
from function.store.connection import Session, job_session
from function.store.deliveries import DeliveryQueries
from function.store.history_dates import HistoryDateQueries
from function.store.hooks import HookStore
from function.store.locks import LockQueries
from function.store.reads import ReadQueries
from function.store.reconcile import ReconcileQueries
from function.store.search_reads import SearchReads
from function.store.sweep_state import GITHUB_APP_SWEEP, SweepStateStore
from function.store.users import UserQueries


class PeeweeStore:
    """The database port of the worker, the CLI and the read routes."""

    def __init__(self, db: Session | peewee.Database | peewee.DatabaseProxy) -> None:
        self.session = session_of(db)
        self.users = UserQueries(self.session)
        self.locks = LockQueries(self.session, self.users)
        self.reconcile = ReconcileQueries(self.session)
        self.deliveries = DeliveryQueries(self.session)
        self.reads = ReadQueries(self.session)
        self.search = SearchReads(self.session)
        self.hooks = HookStore(self.session)
        self.books = BookQueries(self.session)
        self.book_reads = BookReadQueries(self.session)
        self.dates = HistoryDateQueries(self.session)

    @property
    def db(self) -> peewee.Database:
        return self.session.db

    def holds_server_locks(self) -> bool:
        """True while a named lock taken by this store was not released (its release failed)."""
        return self.session.holds_server_locks()

    def sweep_state(self, name: str = GITHUB_APP_SWEEP) -> SweepStateStore:
        """Where the redelivery sweep called ``name`` stopped."""
        return SweepStateStore(self.session, name)


@contextlib.contextmanager
def job_store(db: peewee.Database | peewee.DatabaseProxy, *, keep: bool = False) -> Iterator[PeeweeStore]:
    """A store on a connection opened for one request or job and closed when the block ends (see
    ``function.store.connection.job_session``: ``keep`` keeps it for the next job on this thread)."""
    with job_session(db, keep=keep) as session:
        yield PeeweeStore(session)
