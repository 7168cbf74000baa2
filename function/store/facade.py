"""The store: everything blog-api reads and writes in the database, as plain records.

``PeeweeStore(db)`` runs every query against the database it was given (queries are bound to it
explicitly, so two stores on two databases never interfere). It is composed of one part per concern,
each its own object on one ``Session``: ``users``, ``locks``, ``reconcile``, ``deliveries``, ``reads``,
``hooks`` (the outgoing webhooks), ``sweep_state``, ``books`` and ``book_reads`` (Zenn books), and
``dates`` (publication dates from a repository's history); the
parts' methods are also the store's own, under the same names. Writes that must be all-or-nothing run in
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
from function.store.forward import Forward
from function.store.history_dates import HistoryDateQueries
from function.store.hooks import HookStore
from function.store.job_turns import JobTurnQueries
from function.store.locks import LockQueries
from function.store.reads import ReadQueries
from function.store.reconcile import ReconcileQueries
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
        self.hooks = HookStore(self.session)
        self.turns = JobTurnQueries(self.session, self.locks, self.reconcile, self.deliveries)
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

    # Users
    add_user = Forward("users", UserQueries.add_user)
    get_user = Forward("users", UserQueries.get_user)
    find_user_by_installation = Forward("users", UserQueries.find_user_by_installation)
    list_users = Forward("users", UserQueries.list_users)
    set_installation = Forward("users", UserQueries.set_installation)
    set_repository = Forward("users", UserQueries.set_repository)
    pin_repository = Forward("users", UserQueries.pin_repository)
    # Locks
    installation_user_locked = Forward("locks", LockQueries.installation_user_locked)
    user_lock = Forward("locks", LockQueries.user_lock)
    # The reconcile
    load_index = Forward("reconcile", ReconcileQueries.load_index)
    load_failures = Forward("reconcile", ReconcileQueries.load_failures)
    remember_failures = Forward("reconcile", ReconcileQueries.remember_failures)
    apply = Forward("reconcile", ReconcileQueries.apply)
    # Deliveries
    get_delivery = Forward("deliveries", DeliveryQueries.get_delivery)
    start_delivery = Forward("deliveries", DeliveryQueries.start_delivery)
    finish_delivery = Forward("deliveries", DeliveryQueries.finish_delivery)
    last_sync = Forward("deliveries", DeliveryQueries.last_sync)
    recent_deliveries = Forward("deliveries", DeliveryQueries.recent_deliveries)
    # A push's database work in two turns
    push_opened = Forward("turns", JobTurnQueries.push_opened)
    finish_and_release = Forward("turns", JobTurnQueries.finish_and_release)
    # The read side
    published_page = Forward("reads", ReadQueries.published_page)
    published_articles = Forward("reads", ReadQueries.published_articles)
    published_article = Forward("reads", ReadQueries.published_article)
    published_tag_paths = Forward("reads", ReadQueries.published_tag_paths)
    sitemap_entries = Forward("reads", ReadQueries.sitemap_entries)
    find_user_by_account = Forward("users", UserQueries.find_user_by_account)
    account_of = Forward("users", UserQueries.account_of)
    link_account = Forward("users", UserQueries.link_account)
    # Zenn books: the sync's side, then the read side
    load_book_index = Forward("books", BookQueries.load_book_index)
    load_book_failures = Forward("books", BookQueries.load_book_failures)
    remember_book_failures = Forward("books", BookQueries.remember_book_failures)
    apply_book = Forward("books", BookQueries.apply_book)
    archive_books = Forward("books", BookQueries.archive_books)
    published_books_page = Forward("book_reads", BookReadQueries.published_books_page)
    published_book = Forward("book_reads", BookReadQueries.published_book)
    published_chapter = Forward("book_reads", BookReadQueries.published_chapter)
    book_sitemap_entries = Forward("book_reads", BookReadQueries.book_sitemap_entries)


@contextlib.contextmanager
def job_store(db: peewee.Database | peewee.DatabaseProxy, *, keep: bool = False) -> Iterator[PeeweeStore]:
    """A store on a connection opened for one request or job and closed when the block ends (see
    ``function.store.connection.job_session``: ``keep`` keeps it for the next job on this thread)."""
    with job_session(db, keep=keep) as session:
        yield PeeweeStore(session)
