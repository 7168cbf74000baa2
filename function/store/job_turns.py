"""A push delivery's database work in as few round trips as its order allows: two when nothing changed.

Everything a push needs before its writes depends only on the installation and the delivery: the user and
its lock, the last sync of the repository (the replay check), the article index and the remembered parse
failures, the delivery's own record (the duplicate check), the books' index (read after the articles
are written, but no article write touches it) and its start record. On MySQL/TiDB that is one
multi-statement turn (``push_opened``), in this order, so every read after the ``GET_LOCK`` is under the
lock; the start record is written only when the lock was taken and the delivery is not complete already
(a success or partial one is left exactly as it was). The finish record and the lock's release are the
other turn (``finish_and_release``). 35 ms per round trip makes this 70 ms against 210 ms in seven turns.

The opening turn can be sent twice with the same effect (the start record is not written again for the
same start time), so on a kept connection found dead it is sent again on a new one, as a read is, with no
ping first. SQLite (local, nothing to save) runs the same steps one by one with the same results.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, Unpack

from peewee import SQL, fn

from function.errors import LockTimeout
from function.store.backends import MySQLDatabase, StatementResult
from function.store.base import StoreBase
from function.store.book_records import StoredBook
from function.store.books import book_index_from_rows, book_index_queries
from function.store.connection import Session, connection, is_missing_table, translate_errors
from function.store.deliveries import (
    COMPLETE_OUTCOMES,
    DeliveryQueries,
    finish_query,
    get_delivery_query,
    last_sync_query,
)
from function.store.locks import LockQueries, _lock_name, _lock_prefix
from function.store.models import Delivery, FailedFile, User, to_naive_utc
from function.store.reconcile import ReconcileQueries, packed_index_query, unpack_index
from function.store.records import (
    DeliveryFinish,
    DeliveryRecord,
    RememberedFailure,
    StoredArticle,
    UserRecord,
    is_complete,
)
from function.store.users import _USER_COLUMNS

# Session variables (per connection) for the statements after the GET_LOCK: its result, and when its wait
# began (the start record's time is the client's ``now`` plus that wait, so that it says when the work
# began, as when the steps ran one by one).
_LOCK_VARIABLE = "@blog_api_user_lock"
_WAIT_FROM_VARIABLE = "@blog_api_lock_wait_from"


@dataclass(frozen=True)
class DeliveryStart:
    """The start record a delivery gets (``start_delivery``'s arguments)."""

    delivery_id: str
    event: str
    installation_id: int
    repository: str
    received_at: datetime
    clock: Callable[[], datetime]  # asked as late as possible: the start time is when the work began


@dataclass(frozen=True)
class OpenedPush:
    """What the opening turn found, under the user's lock (held while the ``push_opened`` block runs).

    ``user`` None: nobody is registered for the installation; no lock is held and nothing was read or
    written. ``started``: the start record was written (the lock was taken and the delivery was not
    complete before); ``previous`` is the delivery's record as it was before the turn."""

    user: UserRecord | None
    last_sync: DeliveryRecord | None
    index: Mapping[str, StoredArticle]
    failures: Mapping[str, RememberedFailure]
    previous: DeliveryRecord | None
    started: bool
    # The user's books and chapters (read in the same turn on MySQL/TiDB); None: not read (SQLite), the
    # book sync reads them itself.
    book_index: Mapping[str, StoredBook] | None = None
    # The rows of the caller's own read (``TurnRead``) sent in the same turn; None: not sent.
    also_rows: list[tuple[Any, ...]] | None = None


class TurnRead(Protocol):
    """One more SELECT a caller sends in the opening turn, under the lock (the stored images' rows:
    ``function.assets.syncing.AssetSync``)."""

    def opening_query(self, user: Any) -> Any | None:
        """The SELECT for ``user`` (a subquery giving the user's id); None: not in this turn."""
        ...

    def tables_missing(self) -> None:
        """Its statement failed for a missing table: the turn was sent again without it."""
        ...


class JobTurnQueries(StoreBase):
    """The two turns of a push, on the session of the store's locks, reconcile and deliveries parts."""

    def __init__(
        self, session: Session, locks: LockQueries, reconcile: ReconcileQueries, deliveries: DeliveryQueries
    ) -> None:
        super().__init__(session)
        self._locks = locks
        self._reconcile = reconcile
        self._deliveries = deliveries
        self._closes_after_job = session.closes_after_job
        self._held_server_locks = session.held_server_locks  # the session's set, shared

    @contextlib.contextmanager
    def push_opened(
        self, timeout_s: float, start: DeliveryStart, also: TurnRead | None = None
    ) -> Iterator[OpenedPush]:
        """Take the lock of the user registered for ``start.installation_id`` and read what the push
        needs, starting the delivery's record unless it is complete; the lock is held for the block
        (released at its end unless ``finish_and_release`` did). Raises LockTimeout, with nothing
        written, when the lock is not taken within ``timeout_s``. ``also``: one more read sent in the turn
        (on MySQL/TiDB; its rows are ``also_rows``)."""
        if not isinstance(self._db, MySQLDatabase):
            with self._opened_in_steps(timeout_s, start) as opened:
                yield opened
            return
        with connection(self._db):
            with translate_errors():
                opened, acquired = self._open_in_one_turn(timeout_s, start, also)
            if opened.user is None:
                yield opened
                return
            user_id = opened.user.id
            if acquired != 1:
                raise LockTimeout(f"user {user_id} is being synced by someone else (waited {timeout_s} s)")
            self._held_server_locks.add(user_id)
            try:
                yield opened
            finally:
                if user_id in self._held_server_locks and not self._closes_after_job:
                    self._locks._release_server_lock(user_id)

    def finish_and_release(self, user_id: int, delivery_id: str, /, **finish: Unpack[DeliveryFinish]) -> None:
        """``finish_delivery`` and the user's lock released, in one round trip on MySQL/TiDB (on SQLite
        the lock is released when the ``push_opened`` block ends)."""
        releases = (
            isinstance(self._db, MySQLDatabase)
            and user_id in self._held_server_locks
            and not self._closes_after_job
        )
        if not releases:
            self._deliveries.finish_delivery(delivery_id, **finish)
            return
        statements = [
            self._sql(finish_query(delivery_id, **finish)),
            str(
                self._db.cursor().mogrify(
                    "SELECT RELEASE_LOCK(%s)", (_lock_name(self._db.database, user_id),)
                )
            ),
        ]
        with translate_errors():
            assert isinstance(self._db, MySQLDatabase)
            self._db.execute_batch(statements)
        self._held_server_locks.discard(user_id)

    def _open_in_one_turn(
        self, timeout_s: float, start: DeliveryStart, also: TurnRead | None
    ) -> tuple[OpenedPush, Any]:
        assert isinstance(self._db, MySQLDatabase)
        installation = User.github_installation_id == start.installation_id
        name = fn.CONCAT(_lock_prefix(self._db.database), User.id)
        lock = fn.GET_LOCK(name, max(timeout_s, 0))
        user_id = User.select(User.id).where(installation)
        held = SQL(f"{_LOCK_VARIABLE} = 1")
        # NOW(6) is the time a statement started: in this SET, before the lock's wait; in the writes after
        # it, once the lock is held. The start time is the client's ``now`` plus that wait.
        set_variables = (
            f"SET {_WAIT_FROM_VARIABLE} = NOW(6), "
            f"{_LOCK_VARIABLE} = ({self._sql(User.select(lock).where(installation))})"
        )
        statements = [
            set_variables,
            self._sql(User.select(*_USER_COLUMNS, SQL(_LOCK_VARIABLE)).where(installation)),
            self._sql(last_sync_query(start.installation_id, start.repository)),
            self._sql(packed_index_query(user_id)),
            self._sql(
                FailedFile.select(
                    FailedFile.slug, FailedFile.path, FailedFile.blob_sha, FailedFile.message
                ).where(FailedFile.user == user_id)
            ),
            self._sql(get_delivery_query(start.delivery_id)),
            *(self._sql(query) for query in book_index_queries(user_id)),
        ]
        also_query = also.opening_query(user_id) if also is not None else None
        also_at = len(statements) if also_query is not None else None
        if also_query is not None:
            statements.append(self._sql(also_query))  # before the writes: if it fails, nothing is written
        # The client's time is read last, just before the turn is sent (see ``DeliveryStart.clock``).
        now = to_naive_utc(start.clock())
        started_at = SQL(
            "CAST(%s AS DATETIME(6)) + "
            f"INTERVAL TIMESTAMPDIFF(MICROSECOND, {_WAIT_FROM_VARIABLE}, NOW(6)) MICROSECOND",
            (Delivery.started_at.db_value(now),),
        )
        statements += [
            # A redelivery of an unfinished delivery: attempts + 1, as ``start_delivery`` does; not again
            # when this very turn is sent a second time (the record already started at or after ``now``).
            self._sql(
                Delivery.update(
                    attempts=Delivery.attempts + 1,
                    started_at=started_at,
                    outcome="processing",
                    finished_at=None,
                    error=None,
                ).where(
                    (Delivery.delivery_id == start.delivery_id)
                    & held
                    & Delivery.outcome.not_in(COMPLETE_OUTCOMES)
                    & ~((Delivery.outcome == "processing") & (Delivery.started_at >= now))
                )
            ),
            self._new_delivery_sql(start, started_at),
        ]
        try:
            results = self._db.execute_batch(statements, idempotent=True)
        except Exception as exc:
            if also is None or also_at is None or getattr(exc, "failed_at", None) != also_at:
                raise
            if not is_missing_table(exc):
                raise
            # The caller's tables are gone (or were never made): the lock this batch took is released
            # and the turn sent again without that read; the caller reads (and makes) them itself.
            also.tables_missing()
            self._rows(User.select(fn.RELEASE_LOCK(name)).where(installation & held))
            return self._open_in_one_turn(timeout_s, start, None)
        opened, acquired = self._opened(results, start)
        if also_at is not None:
            opened = dataclasses.replace(opened, also_rows=results[also_at].rows)
        return opened, acquired

    def _new_delivery_sql(self, start: DeliveryStart, started_at: SQL) -> str:
        """A new delivery's record, only when the lock is held (an existing record is left alone)."""
        values = {
            Delivery.delivery_id: start.delivery_id,
            Delivery.event: start.event,
            Delivery.installation_id: start.installation_id,
            Delivery.repository: start.repository,
            Delivery.received_at: to_naive_utc(start.received_at),
            Delivery.outcome: "processing",
            Delivery.attempts: 1,
            Delivery.processed: 0,
            Delivery.succeeded: 0,
            Delivery.failed: 0,
            Delivery.archived: 0,
        }
        columns = ", ".join([*(f"`{field.column_name}`" for field in values), "`started_at`"])
        placeholders = ", ".join(["%s"] * len(values))
        params = (*(field.db_value(value) for field, value in values.items()), *started_at.params)
        table = Delivery._meta.table_name
        # Table and column names from the model, values as placeholders escaped by PyMySQL.
        sql = (
            f"INSERT INTO `{table}` ({columns}) SELECT {placeholders}, {started_at.sql} "  # noqa: S608
            f"FROM DUAL WHERE {_LOCK_VARIABLE} = 1 ON DUPLICATE KEY UPDATE `delivery_id` = `delivery_id`"
        )
        return str(self._db.cursor().mogrify(sql, params))

    def _opened(self, results: list[StatementResult], start: DeliveryStart) -> tuple[OpenedPush, Any]:
        users, last, index, failures, previous_rows, books, chapters = results[1:8]
        if not users.rows:
            return OpenedPush(None, None, {}, {}, None, started=False), None
        row = users.rows[0]
        acquired = row[-1]
        previous = DeliveryRecord(*previous_rows.rows[0]) if previous_rows.rows else None
        opened = OpenedPush(
            user=UserRecord(*row[:-1]),
            last_sync=DeliveryRecord(*last.rows[0]) if last.rows else None,
            index=unpack_index(index.rows),
            failures={r[0]: RememberedFailure(*r) for r in failures.rows},
            previous=previous,
            started=acquired == 1 and not is_complete(previous),
            book_index=book_index_from_rows(books.rows, chapters.rows),
        )
        return opened, acquired

    def _sql(self, query: Any) -> str:
        """A query as the SQL text the server receives (values escaped by PyMySQL)."""
        sql, params = query.bind(self._db).sql()
        return str(self._db.cursor().mogrify(sql, params or None))

    @contextlib.contextmanager
    def _opened_in_steps(self, timeout_s: float, start: DeliveryStart) -> Iterator[OpenedPush]:
        with self._locks.installation_user_locked(start.installation_id, timeout_s) as user:
            if user is None:
                yield OpenedPush(None, None, {}, {}, None, started=False)
                return
            last = self._deliveries.last_sync(start.installation_id, start.repository)
            index = self._reconcile.load_index(user.id)
            failures = self._reconcile.load_failures(user.id)
            previous = self._deliveries.get_delivery(start.delivery_id)
            started = not is_complete(previous)
            if started:
                self._deliveries.start_delivery(
                    start.delivery_id,
                    start.event,
                    start.installation_id,
                    start.repository,
                    start.received_at,
                    start.clock(),
                )
            yield OpenedPush(user, last, index, failures, previous, started)
