"""The store: everything blog-api reads and writes in the database, as plain records.

``PeeweeStore(db)`` runs every query against the database it was given (queries are bound to it
explicitly, so two stores on two databases never interfere). Writes that must be all-or-nothing run in
one transaction; connection failures surface as ``function.store.db.DatabaseUnavailable`` (retryable).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import operator
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import peewee
from peewee import fn

from function.articles.parsed import ParsedArticle
from function.store.db import (
    CHUNK_SIZE,
    KEY_CHUNK_SIZE,
    StatementQueue,
    batched_transaction,
    chunked,
    connection,
    is_mysql,
    translate_errors,
    unwrap,
    upsert_many,
    upsert_queries,
)
from function.store.models import (
    ERROR_MAX_CHARS,
    OUTCOMES,
    Article,
    ArticleTag,
    Delivery,
    Tag,
    User,
    to_naive_utc,
)
from shared.names import PROJECT

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


class UserExists(Exception):
    """The user name, or the installation id, is already registered."""


class UnknownUser(Exception):
    """No user has that name."""


class LockTimeout(Exception):
    """The per-user lock was not acquired in time (another sync holds it): worth retrying."""


@dataclass(frozen=True)
class UserRecord:
    id: int
    name: str
    email: str
    installation_id: int | None
    repository: str | None  # "owner/name"


@dataclass(frozen=True)
class StoredArticle:
    """What the reconcile needs to know about a stored article (no content)."""

    id: int
    slug: str
    path: str
    blob_sha: str
    content_hash: str
    archived: bool
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    tags_hash: str


@dataclass(frozen=True)
class ApplyResult:
    written: int  # rows inserted, or updated because their content or metadata changed
    unchanged: int  # given articles whose content was the same (only path/blob SHA refreshed)
    archived: int  # rows newly archived


@dataclass(frozen=True)
class DeliveryRecord:
    delivery_id: str
    event: str
    installation_id: int | None
    repository: str | None
    received_at: datetime
    started_at: datetime
    finished_at: datetime | None
    head_sha: str | None
    processed: int
    succeeded: int
    failed: int
    archived: int
    outcome: str
    error: str | None
    attempts: int


@dataclass(frozen=True)
class ArticleView:
    """A published article as the read routes serve it."""

    id: int
    slug: str
    title: str
    content: str
    content_html: str
    description: str | None
    type: str | None
    thumbnail: str | None
    tags: tuple[str, ...]  # sorted
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime

    def to_json(self) -> dict[str, Any]:
        """CONTRACT section 3's ``Article``: camelCase keys, ISO 8601 UTC times ending in ``Z``."""
        return {
            "articleId": str(self.id),
            "title": self.title,
            "slug": self.slug,
            "content": self.content,
            "contentHtml": self.content_html,
            "description": self.description,
            "type": self.type,
            "thumbnail": self.thumbnail,
            "tags": list(self.tags),
            "publishedAt": iso_utc(self.published_at),
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
        }


def iso_utc(value: datetime | None) -> str | None:
    """``2026-12-02T19:49:31.123456Z`` for a naive-UTC (or aware) time; None stays None."""
    if value is None:
        return None
    return to_naive_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    """Connection failures inside ``method`` become DatabaseUnavailable."""

    @wraps(method)
    def inner(*args: P.args, **kwargs: P.kwargs) -> R:
        with translate_errors():
            return method(*args, **kwargs)

    return inner


_USER_COLUMNS = (
    User.id,
    User.name,
    User.email,
    User.github_installation_id,
    User.repository,
)
_INDEX_COLUMNS = (
    Article.id,
    Article.slug,
    Article.path,
    Article.blob_sha,
    Article.content_hash,
    Article.archived,
    Article.published_at,
    Article.created_at,
    Article.updated_at,
    Article.tags_hash,
)
# Slugs, SHAs, hashes, flags and times never hold a tab; the path, which may, is packed last.
_PACKED_SEPARATOR = "\t"
_VIEW_COLUMNS = (
    Article.id,
    Article.slug,
    Article.title,
    Article.content,
    Article.content_html,
    Article.description,
    Article.type,
    Article.thumbnail,
    Article.published_at,
    Article.created_at,
    Article.updated_at,
)
_DELIVERY_COLUMNS = (
    Delivery.delivery_id,
    Delivery.event,
    Delivery.installation_id,
    Delivery.repository,
    Delivery.received_at,
    Delivery.started_at,
    Delivery.finished_at,
    Delivery.head_sha,
    Delivery.processed,
    Delivery.succeeded,
    Delivery.failed,
    Delivery.archived,
    Delivery.outcome,
    Delivery.error,
    Delivery.attempts,
)
# Every article column the upsert overwrites on a conflict with (user_id, slug): all values are
# computed from the row read inside the same transaction, so writing them all is exact.
_UPSERT_PRESERVE = (
    Article.path,
    Article.blob_sha,
    Article.title,
    Article.type,
    Article.description,
    Article.thumbnail,
    Article.content,
    Article.content_html,
    Article.content_hash,
    Article.tags_hash,
    Article.publish,
    Article.archived,
    Article.published_at,
    Article.archived_at,
    Article.created_at,
    Article.updated_at,
)

# SQLite: one lock per (database file, user) for the whole process.
_sqlite_locks: dict[tuple[str, int], threading.Lock] = {}
_sqlite_locks_guard = threading.Lock()


class PeeweeStore:
    """The database port of the worker, the CLI and the read routes."""

    def __init__(self, db: peewee.Database | peewee.DatabaseProxy, *, closes_after_job: bool = False) -> None:
        """``closes_after_job``: the connection is closed as soon as the caller's job ends (``job_store``),
        and the server drops a session's named locks with it, so ``installation_user_locked`` need not
        send RELEASE_LOCK: one round trip less per delivery."""
        self._db = unwrap(db)
        self._closes_after_job = closes_after_job

    @property
    def db(self) -> peewee.Database:
        return self._db

    # -- users -------------------------------------------------------------------------------

    @_translated
    def add_user(
        self, name: str, email: str, installation_id: int | None, repository: str | None = None
    ) -> UserRecord:
        """Register a user. Raises UserExists when the name or the installation id is taken."""
        try:
            user_id = (
                User.insert(
                    name=name,
                    email=email,
                    github_installation_id=installation_id,
                    repository=repository,
                )
                .bind(self._db)
                .execute()
            )
        except peewee.IntegrityError as exc:
            raise UserExists(f"a user named {name!r} or with installation {installation_id} exists") from exc
        return UserRecord(int(user_id), name, email, installation_id, repository)

    @_translated
    def get_user(self, name: str) -> UserRecord | None:
        """The user called ``name`` (byte-exact), or None."""
        return self._one_user(User.name == name)

    @_translated
    def find_user_by_installation(self, installation_id: int) -> UserRecord | None:
        """The user registered for a GitHub App installation, or None."""
        return self._one_user(User.github_installation_id == installation_id)

    @_translated
    def list_users(self) -> list[UserRecord]:
        """Every user, by name."""
        rows = self._rows(User.select(*_USER_COLUMNS).order_by(User.name))
        return [UserRecord(*row) for row in rows]

    @_translated
    def set_installation(self, name: str, installation_id: int | None) -> UserRecord:
        """Point the user at another App installation (or none). Raises UnknownUser, or UserExists when
        another user has that installation."""
        try:
            User.update(github_installation_id=installation_id).where(User.name == name).bind(
                self._db
            ).execute()
        except peewee.IntegrityError as exc:
            raise UserExists(f"installation {installation_id} belongs to another user") from exc
        user = self._one_user(User.name == name)
        if user is None:
            raise UnknownUser(f"no user named {name!r}")
        return user

    @_translated
    def set_repository(self, user_id: int, repository: str) -> None:
        """Remember the user's article repository ("owner/name")."""
        User.update(repository=repository).where(User.id == user_id).bind(self._db).execute()

    def _rows(self, query: Any) -> list[tuple[Any, ...]]:
        """Run a SELECT on this store's database; rows as tuples."""
        return list(query.tuples().bind(self._db))

    def _first(self, query: Any) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = query.tuples().bind(self._db).first()
        return row

    def _one_user(self, condition: Any) -> UserRecord | None:
        row = self._first(User.select(*_USER_COLUMNS).where(condition))
        return UserRecord(*row) if row else None

    # -- reconcile -----------------------------------------------------------------------------

    @_translated
    def load_index(self, user_id: int) -> dict[str, StoredArticle]:
        """Every article of the user (archived included) by slug: one SELECT, no content columns."""
        if is_mysql(self._db):
            return self._load_packed_index(user_id)
        rows = self._rows(Article.select(*_INDEX_COLUMNS).where(Article.user == user_id))
        return {row[1]: StoredArticle(*row) for row in rows}

    def _load_packed_index(self, user_id: int) -> dict[str, StoredArticle]:
        """``load_index`` on MySQL/TiDB, with each row packed by the server into one tab-separated string.

        PyMySQL decodes rows in pure Python, column by column: ten columns of a thousand articles cost
        it about 35 ms of CPU, as much as the round trip itself, and every push of a large blog pays
        it. One string per row is split in C and its times parsed with ``fromisoformat`` (about 10 ms).
        The path, the one column that may hold a tab, comes last and is split off whole."""
        rows = self._rows(
            Article.select(
                fn.CONCAT_WS(
                    _PACKED_SEPARATOR,
                    Article.id,
                    Article.slug,
                    Article.blob_sha,
                    Article.content_hash,
                    Article.archived,
                    fn.IFNULL(Article.published_at, ""),
                    Article.created_at,
                    Article.updated_at,
                    Article.tags_hash,
                    Article.path,
                )
            ).where(Article.user == user_id)
        )
        index: dict[str, StoredArticle] = {}
        for (packed,) in rows:
            row_id, slug, blob, content, archived, published, created, updated, tags, path = packed.split(
                _PACKED_SEPARATOR, 9
            )
            index[slug] = StoredArticle(
                id=int(row_id),
                slug=slug,
                path=path,
                blob_sha=blob,
                content_hash=content,
                archived=archived != "0",
                published_at=datetime.fromisoformat(published) if published else None,
                created_at=datetime.fromisoformat(created),
                updated_at=datetime.fromisoformat(updated),
                tags_hash=tags,
            )
        return index

    @_translated
    def apply(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        archive_slugs: Sequence[str],
        now: datetime,
        *,
        index: Mapping[str, StoredArticle] | None = None,
    ) -> ApplyResult:
        """Write ``articles`` and archive ``archive_slugs`` for the user, all or nothing.

        Per article: a new one gets created_at = updated_at = now; one whose content hash is the same
        (and is not archived) keeps updated_at and only has its path and blob SHA refreshed; any other
        gets updated_at = now. published_at is set the first time an article is published and kept
        after. Every given article is un-archived; its tags are replaced when they changed. Archiving
        sets archived and archived_at, keeps updated_at, and never touches a given slug.

        ``index`` is the caller's ``load_index`` read, taken while it holds ``user_lock`` (so no one
        else can have written since): it saves re-reading the rows. Without it the rows are read inside
        the transaction (locked on MySQL).

        The statement count does not depend on the number of articles, except one more article INSERT
        per ``CHUNK_SIZE`` given articles (and one more key statement per ``KEY_CHUNK_SIZE``). When the
        whole write is one statement (a few edited articles, same tags, nothing archived) it runs on
        its own, without BEGIN/COMMIT. On MySQL/TiDB any other write is one round trip too (BEGIN, the
        statements and COMMIT sent together, see ``batched_transaction``), two without ``index``.
        Nothing to write: no statement at all. Raises ValueError for duplicate slugs.
        """
        slugs = [a.slug for a in articles]
        if len(set(slugs)) != len(slugs):
            raise ValueError("apply() was given two articles with the same slug")
        given = set(slugs)
        to_archive = sorted({s for s in archive_slugs if s not in given})
        if not articles and not to_archive:
            return ApplyResult(0, 0, 0)
        now = to_naive_utc(now)
        known = (
            None if index is None else {slug: _Existing.of(index[slug]) for slug in slugs if slug in index}
        )
        plan = _Plan(user_id, articles, known or {}, now)
        one_statement = (
            known is not None and not plan.retag and not to_archive and len(plan.rows) <= CHUNK_SIZE
        )
        if one_statement:
            # A single statement is atomic by itself: no BEGIN/COMMIT for the server to run.
            self._upsert_articles(plan.rows)
            return ApplyResult(written=plan.written, unchanged=plan.unchanged, archived=0)
        # MySQL/TiDB: everything below reaches the server in one round trip with BEGIN and COMMIT (two
        # when the rows must first be read under lock), however many statements it takes.
        with batched_transaction(self._db) as tx:
            if known is None:
                plan = _Plan(user_id, articles, self._lock_existing(tx, user_id, slugs), now)
            for query in upsert_queries(
                self._db,
                Article,
                plan.rows,
                conflict_target=[Article.user, Article.slug],
                preserve=_UPSERT_PRESERVE,
            ):
                tx.add(query)
            if plan.retag:
                self._queue_tag_rewrite(tx, user_id, plan.retag, plan.existing)
            archive_slots = [
                tx.add(
                    Article.update(archived=True, archived_at=now)
                    .where(Article.user == user_id, Article.slug.in_(list(chunk)), ~Article.archived)
                    .bind(self._db)
                )
                for chunk in chunked(to_archive, KEY_CHUNK_SIZE)
            ]
        archived = sum(tx.rowcount(slot) for slot in archive_slots)
        return ApplyResult(written=plan.written, unchanged=plan.unchanged, archived=archived)

    def _upsert_articles(self, rows: list[dict[str, Any]]) -> None:
        upsert_many(
            self._db,
            Article,
            rows,
            conflict_target=[Article.user, Article.slug],
            preserve=_UPSERT_PRESERVE,
        )

    def _lock_existing(self, tx: StatementQueue, user_id: int, slugs: Sequence[str]) -> dict[str, _Existing]:
        """The rows of these slugs as they are now. On MySQL the rows are locked until the transaction
        ends, so nobody can change them between this read and our write (SQLite: BEGIN IMMEDIATE)."""
        existing: dict[str, _Existing] = {}
        for chunk in chunked(slugs, KEY_CHUNK_SIZE):
            query = Article.select(
                Article.slug,
                Article.id,
                Article.content_hash,
                Article.published_at,
                Article.created_at,
                Article.updated_at,
                Article.archived,
                Article.tags_hash,
            ).where(Article.user == user_id, Article.slug.in_(list(chunk)))
            if is_mysql(self._db):
                query = query.for_update()
            for row in tx.read(query.bind(self._db)):
                existing[row[0]] = _Existing(*row)
        return existing

    def _queue_tag_rewrite(
        self,
        tx: StatementQueue,
        user_id: int,
        changed: Sequence[ParsedArticle],
        existing: dict[str, _Existing],
    ) -> None:
        """Make the changed articles' tags exactly their given tags, in statements that need no answer
        from the server first (new articles' ids and new tags' ids are looked up by the INSERT ... SELECT
        itself), so they travel with the rest of the transaction: a constant number of statements."""
        db = self._db
        stale = [existing[a.slug].id for a in changed if a.slug in existing]  # new rows have no tags yet
        for chunk in chunked(stale, KEY_CHUNK_SIZE):
            tx.add(ArticleTag.delete().where(ArticleTag.article.in_(list(chunk))).bind(db))

        paths = sorted({tag for a in changed for tag in a.tags})
        if not paths:
            return
        for chunk in chunked(paths, KEY_CHUNK_SIZE):
            tx.add(Tag.insert_many([{"path": p} for p in chunk]).on_conflict_ignore().bind(db))
        # Articles with the same tag set share one condition: a blog has few distinct sets, so the
        # statement stays short whatever the number of articles.
        by_tag_set: dict[tuple[str, ...], list[str]] = {}
        for article in changed:
            if article.tags:
                by_tag_set.setdefault(tuple(sorted(set(article.tags))), []).append(article.slug)
        for group in _groups_of_keys(list(by_tag_set.items()), KEY_CHUNK_SIZE):
            wanted = functools.reduce(
                operator.or_,
                [Article.slug.in_(slugs) & Tag.path.in_(list(tags)) for tags, slugs in group],
            )
            pairs = (
                Article.select(Article.id, Tag.id)
                .join(Tag, peewee.JOIN.CROSS)
                .where(Article.user == user_id, wanted)
            )
            tx.add(ArticleTag.insert_from(pairs, fields=[ArticleTag.article, ArticleTag.tag]).bind(db))

    # -- the per-user lock ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def installation_user_locked(self, installation_id: int, timeout_s: float) -> Iterator[UserRecord | None]:
        """The user registered for an App installation, with that user's sync lock (``user_lock``) held
        for the block; None, and no lock, when nobody is registered for it.

        On MySQL/TiDB the lookup and ``GET_LOCK`` are one statement, so the worker pays one database
        round trip (35 ms through the proxy) instead of two. Raises LockTimeout like ``user_lock``."""
        if not is_mysql(self._db):
            user = self.find_user_by_installation(installation_id)
            if user is None:
                yield None
                return
            with self.user_lock(user.id, timeout_s):
                yield user
            return
        with connection(self._db):
            query = User.select(
                *_USER_COLUMNS,
                fn.GET_LOCK(fn.CONCAT(_lock_prefix(self._db.database), User.id), max(timeout_s, 0)),
            ).where(User.github_installation_id == installation_id)
            with translate_errors():
                row = self._first(query)
            if row is None:
                yield None
                return
            user, acquired = UserRecord(*row[:-1]), row[-1]
            if acquired != 1:
                raise LockTimeout(f"user {user.id} is being synced by someone else (waited {timeout_s} s)")
            try:
                yield user
            finally:
                if not self._closes_after_job:
                    self._release_server_lock(user.id)

    @contextlib.contextmanager
    def user_lock(self, user_id: int, timeout_s: float) -> Iterator[None]:
        """Hold the user's sync lock for the block: on MySQL/TiDB a named server lock (``GET_LOCK``) on
        this thread's connection, so it holds across processes and Lambda instances; on SQLite a
        process-wide lock. Raises LockTimeout when not acquired within ``timeout_s`` seconds.

        Keep ``timeout_s`` below the connection's read time-out (30 s by default), or the wait ends as
        DatabaseUnavailable instead; TiDB rounds waits up to at least 1 s (MariaDB takes fractions)."""
        if is_mysql(self._db):
            with connection(self._db), self._server_lock(user_id, timeout_s):
                yield
        else:
            lock = self._process_lock(user_id)
            if not lock.acquire(timeout=max(timeout_s, 0)):
                raise LockTimeout(f"user {user_id} is being synced by someone else (waited {timeout_s} s)")
            try:
                yield
            finally:
                lock.release()

    @contextlib.contextmanager
    def _server_lock(self, user_id: int, timeout_s: float) -> Iterator[None]:
        name = _lock_name(self._db.database, user_id)
        with translate_errors():
            row = self._db.execute_sql("SELECT GET_LOCK(%s, %s)", (name, max(timeout_s, 0))).fetchone()
        # 1: acquired; 0: timed out; NULL: an error such as the session being killed while waiting.
        if not row or row[0] != 1:
            raise LockTimeout(f"user {user_id} is being synced by someone else (waited {timeout_s} s)")
        try:
            yield
        finally:
            self._release_server_lock(user_id)

    def _release_server_lock(self, user_id: int) -> None:
        try:
            self._db.execute_sql("SELECT RELEASE_LOCK(%s)", (_lock_name(self._db.database, user_id),))
        except peewee.PeeweeException as exc:
            # The connection is gone, and the server released the lock with it.
            log.warning("Releasing the user lock failed", extra={"user_id": user_id, "error": str(exc)})

    def _process_lock(self, user_id: int) -> threading.Lock:
        key = (str(self._db.database), user_id)
        with _sqlite_locks_guard:
            return _sqlite_locks.setdefault(key, threading.Lock())

    # -- deliveries ------------------------------------------------------------------------------

    @_translated
    def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        """The delivery's record, or None when it was never started."""
        row = self._first(Delivery.select(*_DELIVERY_COLUMNS).where(Delivery.delivery_id == delivery_id))
        return DeliveryRecord(*row) if row else None

    @_translated
    def start_delivery(
        self,
        delivery_id: str,
        event: str,
        installation_id: int | None,
        repository: str | None,
        received_at: datetime,
        now: datetime,
    ) -> None:
        """Record that processing starts: a new row (attempts 1), or on a redelivery attempts + 1,
        started_at = now, outcome "processing" and the previous finish cleared. One statement."""
        now = to_naive_utc(now)
        row = {
            "delivery_id": delivery_id,
            "event": event,
            "installation_id": installation_id,
            "repository": repository,
            "received_at": to_naive_utc(received_at),
            "started_at": now,
            "outcome": "processing",
            "attempts": 1,
        }
        upsert_many(
            self._db,
            Delivery,
            [row],
            conflict_target=[Delivery.delivery_id],
            update={
                Delivery.attempts: Delivery.attempts + 1,
                Delivery.started_at: now,
                Delivery.outcome: "processing",
                Delivery.finished_at: None,
                Delivery.error: None,
            },
        )

    @_translated
    def finish_delivery(
        self,
        delivery_id: str,
        *,
        head_sha: str | None,
        processed: int,
        succeeded: int,
        failed: int,
        archived: int,
        outcome: str,
        error: str | None,
        now: datetime,
    ) -> None:
        """Record how processing ended (one UPDATE). ``error`` is cut to ERROR_MAX_CHARS. A delivery
        that was never started is left alone. Raises ValueError for an unknown outcome."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}")
        Delivery.update(
            head_sha=head_sha,
            processed=processed,
            succeeded=succeeded,
            failed=failed,
            archived=archived,
            outcome=outcome,
            error=error[:ERROR_MAX_CHARS] if error else error,
            finished_at=to_naive_utc(now),
        ).where(Delivery.delivery_id == delivery_id).bind(self._db).execute()

    @_translated
    def recent_deliveries(self, limit: int) -> list[DeliveryRecord]:
        """The ``limit`` most recently received deliveries, newest first."""
        query = (
            Delivery.select(*_DELIVERY_COLUMNS)
            .order_by(Delivery.received_at.desc(), Delivery.delivery_id.desc())
            .limit(max(limit, 0))
        )
        return [DeliveryRecord(*row) for row in self._rows(query)]

    # -- the read side ---------------------------------------------------------------------------

    @_translated
    def published_articles(
        self, user_name: str, type: str | None = None, tag: str | None = None
    ) -> list[ArticleView] | None:
        """The user's published, non-archived articles, newest ``published_at`` first (then by slug);
        None when there is no such user. ``type`` filters exactly; ``tag="tech/aws"`` keeps articles
        tagged ``tech/aws`` or any tag below it (``tech/aws/lambda``), not ``tech/awsome``. Two
        statements (articles, then their tags), three when nothing matched (does the user exist?)."""
        query = self._published(user_name)
        if type is not None:
            query = query.where(Article.type == type)
        if tag is not None:
            query = query.where(Article.id.in_(_tagged(tag)))
        rows = self._rows(query.order_by(Article.published_at.desc(), Article.slug))
        if not rows:
            exists = User.select(User.id).where(User.name == user_name).bind(self._db).exists()
            return [] if exists else None
        # The tags of exactly these articles: the same filter again as a subquery, no id list to send.
        tags = self._tags_of(query.select(Article.id))
        return [_view(row, tags.get(row[0], ())) for row in rows]

    @_translated
    def published_article(self, user_name: str, slug: str) -> ArticleView | None:
        """One published, non-archived article, or None (unknown user or slug, draft, archived)."""
        query = self._published(user_name).where(Article.slug == slug)
        row = self._first(query)
        if row is None:
            return None
        tags = self._tags_of([row[0]])
        return _view(row, tags.get(row[0], ()))

    def _published(self, user_name: str) -> Any:
        return (
            Article.select(*_VIEW_COLUMNS)
            .join(User, on=(Article.user == User.id))
            .where(User.name == user_name, Article.publish, ~Article.archived)
        )

    def _tags_of(self, article_ids: Any) -> dict[int, tuple[str, ...]]:
        query = (
            ArticleTag.select(ArticleTag.article, Tag.path)
            .join(Tag, on=(ArticleTag.tag == Tag.id))
            .where(ArticleTag.article.in_(article_ids))
        )
        found: dict[int, list[str]] = {}
        for article_id, path in self._rows(query):
            found.setdefault(article_id, []).append(path)
        return {article_id: tuple(sorted(paths)) for article_id, paths in found.items()}


@contextlib.contextmanager
def job_store(db: peewee.Database | peewee.DatabaseProxy) -> Iterator[PeeweeStore]:
    """A store on a connection opened for one request or job and closed when the block ends (connect
    and close per job). When this block opened the connection, the store knows the close will release
    its named locks (see ``PeeweeStore``); inside someone else's connection it releases them itself."""
    real = unwrap(db)
    opens_here = real.is_closed()
    with connection(real):
        yield PeeweeStore(real, closes_after_job=opens_here)


@dataclass(frozen=True)
class _Existing:
    slug: str
    id: int
    content_hash: str
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    archived: bool
    tags_hash: str

    @classmethod
    def of(cls, stored: StoredArticle) -> _Existing:
        return cls(
            stored.slug,
            stored.id,
            stored.content_hash,
            stored.published_at,
            stored.created_at,
            stored.updated_at,
            stored.archived,
            stored.tags_hash,
        )


class _Plan:
    """The rows to upsert and the articles whose tags must be rewritten, from what is stored."""

    def __init__(
        self, user_id: int, articles: Sequence[ParsedArticle], existing: dict[str, _Existing], now: datetime
    ) -> None:
        self.existing = existing
        self.rows: list[dict[str, Any]] = []
        self.retag: list[ParsedArticle] = []
        self.written = self.unchanged = 0
        for article in articles:
            old = existing.get(article.slug)
            same = old is not None and old.content_hash == article.content_hash and not old.archived
            if same:
                self.unchanged += 1
            else:
                self.written += 1
            if (old is None and article.tags) or (
                old is not None and old.tags_hash != tags_hash(article.tags)
            ):
                self.retag.append(article)
            self.rows.append(_article_row(user_id, article, old, same, now))


def tags_hash(tags: Sequence[str]) -> str:
    """A fingerprint of an article's tag set (order and duplicates do not matter)."""
    return hashlib.sha256("\n".join(sorted(set(tags))).encode()).hexdigest()


def _article_row(
    user_id: int, article: ParsedArticle, old: _Existing | None, same: bool, now: datetime
) -> dict[str, Any]:
    if old is None:
        created_at, updated_at = now, now
        published_at = now if article.publish else None
    else:
        created_at = old.created_at
        updated_at = old.updated_at if same else now
        # Set the first time the article is published, kept after (even if it is unpublished later).
        published_at = old.published_at or (now if article.publish else None)
    return {
        "user": user_id,
        "slug": article.slug,
        "path": article.path,
        "blob_sha": article.blob_sha,
        "title": article.title,
        "type": article.type,
        "description": article.description,
        "thumbnail": article.thumbnail,
        "content": article.content,
        "content_html": article.content_html,
        "content_hash": article.content_hash,
        "tags_hash": tags_hash(article.tags),
        "publish": article.publish,
        "archived": False,
        "published_at": published_at,
        "archived_at": None,
        "created_at": created_at,
        "updated_at": updated_at,
    }


def _groups_of_keys(
    items: Sequence[tuple[tuple[str, ...], list[str]]], limit: int
) -> Iterator[list[tuple[tuple[str, ...], list[str]]]]:
    """Consecutive (tags, slugs) groups with at most ``limit`` keys in all (one statement each); a
    group bigger than the limit alone is split by its slugs."""
    group: list[tuple[tuple[str, ...], list[str]]] = []
    size = 0
    for tags, slugs in items:
        for chunk in chunked(slugs, max(limit - len(tags), 1)):
            cost = len(tags) + len(chunk)
            if group and size + cost > limit:
                yield group
                group, size = [], 0
            group.append((tags, list(chunk)))
            size += cost
    if group:
        yield group


def _tagged(tag: str) -> Any:
    """Article ids tagged ``tag`` or below it. A range on the byte-exact key instead of LIKE: no
    wildcard can be smuggled in, and the index on tags.path is used. ``"0"`` is the character after
    ``"/"``, so [tag + "/", tag + "0") is exactly the paths that start with ``tag/``."""
    tag = tag.strip("/")
    below = (Tag.path >= tag + "/") & (Tag.path < tag + "0")
    return (
        ArticleTag.select(ArticleTag.article)
        .join(Tag, on=(ArticleTag.tag == Tag.id))
        .where((Tag.path == tag) | below)
    )


def _view(row: tuple[Any, ...], tags: tuple[str, ...]) -> ArticleView:
    (
        article_id,
        slug,
        title,
        content,
        content_html,
        description,
        type_,
        thumbnail,
        published,
        created,
        updated,
    ) = row
    return ArticleView(
        id=article_id,
        slug=slug,
        title=title,
        content=content,
        content_html=content_html,
        description=description,
        type=type_,
        thumbnail=thumbnail,
        tags=tags,
        published_at=published,
        created_at=created,
        updated_at=updated,
    )


def _lock_prefix(database: str) -> str:
    """The server-wide lock name of a user is this prefix and the user id (MySQL caps names at 64
    characters; GET_LOCK names are per server, so the database is part of it: dev and prod may share one)."""
    prefix = f"{PROJECT}:{database}:user:"
    if len(prefix) + 20 <= 64:  # 20: the digits of the largest id
        return prefix
    return f"{PROJECT}:{hashlib.sha256(database.encode()).hexdigest()[:16]}:user:"


def _lock_name(database: str, user_id: int) -> str:
    return f"{_lock_prefix(database)}{user_id}"
