"""Writing many rows in few round trips: upserts per backend, chunking, and the one-round-trip transaction."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import peewee
import pymysql

from function.articles.row_size import stored_row_bytes, toc_json
from function.store.backends import MySQLDatabase, StatementResult, is_mysql
from function.store.bounds import groups, limits_of, row_bytes
from function.store.steps import note_step

log = logging.getLogger(__name__)
_peewee_log = logging.getLogger("peewee")


# Article rows per INSERT: an article row carries its Markdown and HTML, so this keeps a statement far
# below MySQL's max_allowed_packet (16-64 MB by default) for articles of normal size.
CHUNK_SIZE = 500
# Keys per IN (...) and small rows (tags, tag pairs) per INSERT: well under SQLite's limit of 32,766
# bound parameters, and a few hundred KB per statement at most.
KEY_CHUNK_SIZE = 5000

# MySQL/TiDB: a transaction's statements travel together, several per round trip (multi-statements), up
# to this many bytes per round trip. Through Lambda → proxy → Tailnet → TiDB a round trip is 30-40 ms,
# more than the server spends on the statements of a sync; 4 MB stays far below max_allowed_packet.
BATCH_MAX_BYTES = 4 * 1024 * 1024


# No write transaction writes more than this many bytes, counted as TiDB counts them: every row it
# inserts or rewrites, whole (TiDB has no partial update: setting an article's archived flag rewrites
# every column of its row). TiDB refuses a transaction over txn-total-size-limit (100 MiB by default,
# error 8004, on every retry); the bounds below keep each kind of transaction under this one.
TRANSACTION_WRITE_MAX_BYTES = 64 * 1024 * 1024
# One sync's articles are split into transactions of at most this many articles and bytes of rows
# (``article_bytes``): TiDB holds several times the raw bytes in memory while it commits, so 8 MiB keeps
# far below the bound; a first sync of 20,000 articles (about 115 MB) is then about 15 transactions, each
# committed and kept whatever comes after. One row is under 6 MiB (``function.articles.row_size``).
TRANSACTION_MAX_ARTICLES = 1000
TRANSACTION_MAX_BYTES = 8 * 1024 * 1024
# Articles archived per transaction, by count and by the bytes of their rows (measured by the database,
# ``function.store.row_bytes``): TiDB rewrites each whole row to set the flag, so a delete of most of a
# large blog is split like a first sync of it. The first archives share the last transaction of
# articles: together at most TRANSACTION_MAX_BYTES + ARCHIVE_MAX_BYTES, under the bound.
ARCHIVE_MAX_ARTICLES = 1000
ARCHIVE_MAX_BYTES = 48 * 1024 * 1024
# A book is written in one transaction when its chapters' rows (those read again, those moved) weigh at
# most this; a larger one in parts of TRANSACTION_MAX_BYTES that readers see all at once
# (``function.store.book_parts``).
BOOK_TRANSACTION_MAX_BYTES = 48 * 1024 * 1024
# What one tag of an article adds to its transaction: its article_tags row and index entries, and a share
# of a new tag row.
_TAG_BYTES = 128


def article_bytes(article: Any) -> int:
    """About what writing an article costs a transaction: its whole row (Markdown, HTML, table of
    contents and the short columns, as ``function.articles.row_size`` counts them) and its tags' rows."""
    others = (article.title, article.description, article.path, article.slug, article.thumbnail)
    row = stored_row_bytes(article.content, article.content_html, toc_json(article.toc), others)
    return row + _TAG_BYTES * len(article.tags)


def transaction_batches(
    articles: Sequence[Any],
    max_articles: int = TRANSACTION_MAX_ARTICLES,
    max_bytes: int = TRANSACTION_MAX_BYTES,
) -> Iterator[list[Any]]:
    """Consecutive groups of ``articles`` with at most ``max_articles`` and ``max_bytes`` (by
    ``article_bytes``) each; an article bigger than ``max_bytes`` alone is a group of its own."""
    return groups(articles, max_items=max_articles, weights=[(article_bytes, max_bytes)])


def write_transaction(db: peewee.Database) -> Any:
    """A transaction for read-then-write work. On SQLite it starts with BEGIN IMMEDIATE, so the write
    lock is taken up front and a concurrent writer waits (busy time-out) instead of failing the upgrade
    from reader to writer; on MySQL the reads take row locks themselves (SELECT ... FOR UPDATE)."""
    if is_mysql(db):
        return db.atomic()
    return db.atomic("IMMEDIATE")


def upsert_many(
    db: peewee.Database,
    model: type[peewee.Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    conflict_target: Sequence[peewee.Field],
    preserve: Sequence[peewee.Field] = (),
    update: Mapping[peewee.Field, Any] | None = None,
) -> int:
    """Insert ``rows`` (dicts keyed by field name), updating the existing row on a unique-key conflict:
    ``preserve`` columns take the inserted value, ``update`` sets expressions over the existing row.
    One INSERT per ``CHUNK_SIZE`` rows; no statement at all for no rows. Returns the statement count.

    The one place the backends differ for upserts: MySQL renders ``ON DUPLICATE KEY UPDATE`` and
    refuses a conflict target (any unique key triggers it), SQLite needs ``ON CONFLICT (target)``.
    """
    queries = upsert_queries(
        db, model, rows, conflict_target=conflict_target, preserve=preserve, update=update
    )
    for query in queries:
        query.execute()
    return len(queries)


def upsert_queries(
    db: peewee.Database,
    model: type[peewee.Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    conflict_target: Sequence[peewee.Field],
    preserve: Sequence[peewee.Field] = (),
    update: Mapping[peewee.Field, Any] | None = None,
) -> list[Any]:
    """``upsert_many``'s INSERTs, bound to ``db`` and not yet run (for a ``StatementQueue``)."""
    queries = []
    for chunk in upsert_chunks(db, rows, reserved=2 * len(update or {})):
        query = model.insert_many(chunk)
        if is_mysql(db):
            query = query.on_conflict(preserve=list(preserve), update=dict(update or {}))
        else:
            query = query.on_conflict(
                conflict_target=list(conflict_target), preserve=list(preserve), update=dict(update or {})
            )
        queries.append(query.bind(db))
    return queries


def upsert_chunks(
    db: peewee.Database, rows: Sequence[Mapping[str, Any]], *, reserved: int = 0
) -> list[list[Mapping[str, Any]]]:
    """The rows of each multi-row INSERT: at most ``CHUNK_SIZE`` rows, and within the database's
    limits (``function.store.bounds``) for parameters (``reserved`` of them taken by the rest of
    the statement) and bytes."""
    if not rows:
        return []
    limits = limits_of(db)
    columns = max(len(row) for row in rows)
    return list(
        groups(
            rows,
            max_items=min(CHUNK_SIZE, limits.rows(columns, reserved)),
            weights=[(row_bytes, limits.statement_bytes)],
        )
    )


_Pending = tuple[int | None, str, str]  # (result slot or None, SQL, step)


class StatementQueue:
    """The statements of one transaction (``batched_transaction``), in order.

    MySQL/TiDB: ``add`` only queues; the queue travels with the next ``read`` or with the COMMIT, so a
    transaction of any number of statements costs one round trip (one per ``BATCH_MAX_BYTES``) plus one
    per ``read``. SQLite (local, no latency to save): every statement runs at once.
    """

    def __init__(self, db: peewee.Database) -> None:
        self._db = db
        self._mysql = db if isinstance(db, MySQLDatabase) else None
        self._pending: list[_Pending] = []
        self._results: list[StatementResult | None] = []
        self.sent = False  # something reached the server: a failure must roll back

    def add(self, query: Any, step: str = "writing") -> int:
        """Queue a statement; its result (``rowcount``) is known once the transaction ends. ``step``
        names the work it is part of ("writing tags"): an error it causes is noted with it."""
        slot = len(self._results)
        self._results.append(None)
        sql, params = query.sql()
        if self._mysql is not None:
            # PyMySQL writes the parameters into the text, escaped as it escapes every query's.
            text: str = self._db.connection().cursor().mogrify(sql, params or None)
            self._pending.append((slot, text, step))
        else:
            self.sent = True
            try:
                cursor = self._db.execute_sql(sql, params)
            except Exception as exc:
                note_step(exc, step)
                raise
            self._results[slot] = StatementResult(cursor.rowcount, [])
        return slot

    def read(self, query: Any, step: str = "reading") -> list[tuple[Any, ...]]:
        """Run a SELECT now (with whatever is queued before it) and return its rows."""
        if self._mysql is None:
            self.sent = True
            try:
                return list(query.tuples())
            except Exception as exc:
                note_step(exc, step)
                raise
        slot = self.add(query, step)
        self.flush()
        result = self._results[slot]
        assert result is not None  # flush fills every slot it sent
        return result.rows

    def rowcount(self, slot: int) -> int:
        result = self._results[slot]
        if result is None:
            raise RuntimeError("the statement has not run yet: read results after the transaction")
        return result.rowcount

    def queue_sql(self, sql: str, step: str = "writing") -> None:
        """Queue a statement with no parameters and no result to keep (BEGIN, COMMIT)."""
        self._pending.append((None, sql, step))

    def flush(self) -> None:
        """Send what is queued, ``BATCH_MAX_BYTES`` at most per round trip."""
        if self._mysql is None:
            return
        for group in _packed(self._pending):
            self.sent = True
            try:
                results = self._mysql.execute_batch([sql for _, sql, _ in group])
            except Exception as exc:
                # The server ran the statements before the failing one (``failed_at``), then stopped.
                failed_at = getattr(exc, "failed_at", None)
                if isinstance(failed_at, int) and failed_at < len(group):
                    note_step(exc, group[failed_at][2])
                raise
            for (slot, _, _), result in zip(group, results, strict=True):
                if slot is not None:
                    self._results[slot] = result
        self._pending = []


def _packed(pending: Sequence[_Pending]) -> Iterator[list[_Pending]]:
    """The queued statements in round trips of at most ``BATCH_MAX_BYTES`` (one bigger goes alone)."""
    return groups(pending, max_items=len(pending), weights=[(_sql_bytes, BATCH_MAX_BYTES)])


def _sql_bytes(item: _Pending) -> int:
    return len(item[1].encode())


@contextlib.contextmanager
def batched_transaction(db: peewee.Database) -> Iterator[StatementQueue]:
    """One all-or-nothing transaction whose statements are queued on a ``StatementQueue``.

    MySQL/TiDB: BEGIN, the statements and COMMIT are sent together when the block ends (earlier only for
    a ``read``); if any of them fails, or the block raises after something was sent, a ROLLBACK follows
    (a dropped connection rolls back on the server by itself). SQLite: ``write_transaction``.
    """
    if not isinstance(db, MySQLDatabase):
        with write_transaction(db):
            yield StatementQueue(db)
        return
    queue = StatementQueue(db)
    queue.queue_sql("BEGIN", "starting the transaction")
    try:
        yield queue
        queue.queue_sql("COMMIT", "committing")
        queue.flush()
    except BaseException:
        if queue.sent:
            _rollback_quietly(db)
        raise


def _rollback_quietly(db: peewee.Database) -> None:
    try:
        db.execute_sql("ROLLBACK")
    except (peewee.PeeweeException, pymysql.err.Error, OSError) as exc:
        # The connection is gone: the server rolled the transaction back when it lost it.
        log.debug("ROLLBACK after a failed transaction failed", extra={"error": str(exc)})
