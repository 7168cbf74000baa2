"""The reconcile: the index of a user's articles, and one transaction that applies a sync to it."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from peewee import fn

from function.articles.parsed import ParsedArticle
from function.store.backends import is_mysql
from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.batching import (
    KEY_CHUNK_SIZE,
    StatementQueue,
    batched_transaction,
    upsert_queries,
)
from function.store.bounds import groups, limits_of
from function.store.models import (
    Article,
    FailedFile,
    to_naive_utc,
)
from function.store.records import (
    ApplyResult,
    RememberedFailure,
    StoredArticle,
)
from function.store.steps import note_step
from function.store.tag_rewrite import queue_tag_rewrite

log = logging.getLogger(__name__)


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
    Article.publish,
)
# Slugs, SHAs, hashes, flags and times never hold a tab; the path, which may, is packed last.
_PACKED_SEPARATOR = "\t"
# Every article column the upsert overwrites on a conflict with (user_id, slug): all values are
# computed from the row read inside the same transaction, so writing them all is exact.
_UPSERT_PRESERVE = (
    Article.path,
    Article.blob_sha,
    Article.title,
    Article.type,
    Article.description,
    Article.thumbnail,
    Article.emoji,
    Article.content,
    Article.content_html,
    Article.toc,
    Article.content_hash,
    Article.tags_hash,
    Article.publish,
    Article.archived,
    Article.published_at,
    Article.archived_at,
    Article.created_at,
    Article.updated_at,
)


class ReconcileQueries(StoreBase):
    @_translated
    def load_index(self, user_id: int) -> dict[str, StoredArticle]:
        """Every article of the user (archived included) by slug: one SELECT, no content columns."""
        if is_mysql(self._db):
            return self._load_packed_index(user_id)
        rows = self._rows(Article.select(*_INDEX_COLUMNS).where(Article.user == user_id))
        return {row[1]: StoredArticle(*row) for row in rows}

    @_translated
    def load_failures(self, user_id: int) -> dict[str, RememberedFailure]:
        """The user's article files that failed to parse, by slug, with the blob SHA they failed at."""
        query = FailedFile.select(FailedFile.slug, FailedFile.path, FailedFile.blob_sha, FailedFile.message)
        rows = self._rows(query.where(FailedFile.user == user_id))
        return {row[0]: RememberedFailure(*row) for row in rows}

    @_translated
    def remember_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None:
        """Record (or replace) these parse failures and forget the given slugs', in one transaction.
        Nothing to do: no statement."""
        failed = {f.slug for f in failures}
        forget = sorted(set(forget_slugs) - failed)
        if not failures and not forget:
            return
        rows = [
            {"user": user_id, "slug": f.slug, "path": f.path, "blob_sha": f.blob_sha, "message": f.message}
            for f in failures
        ]
        keys = limits_of(self._db).keys(reserved=1)
        with batched_transaction(self._db) as tx:
            for chunk in groups(forget, max_items=min(keys, KEY_CHUNK_SIZE)):
                tx.add(
                    FailedFile.delete()
                    .where(FailedFile.user == user_id, FailedFile.slug.in_(chunk))
                    .bind(self._db),
                    "forgetting failed files",
                )
            for query in upsert_queries(
                self._db,
                FailedFile,
                rows,
                conflict_target=[FailedFile.user, FailedFile.slug],
                preserve=(FailedFile.path, FailedFile.blob_sha, FailedFile.message),
            ):
                tx.add(query, "remembering failed files")

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
                    Article.publish,
                    Article.path,
                )
            ).where(Article.user == user_id)
        )
        index: dict[str, StoredArticle] = {}
        for (packed,) in rows:
            (row_id, slug, blob, content, archived, published, created, updated, tags, publish, path) = (
                packed.split(_PACKED_SEPARATOR, 10)
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
                publish=publish != "0",
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
        gets updated_at = now. published_at is the front matter's time when it names one, else it is set
        the first time an article is published (the slug's leading date, or now) and kept after
        (``publication_time``). Every given article is un-archived; its tags are replaced when they
        changed. Archiving sets archived and archived_at, keeps updated_at, and never touches a given slug.

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
        # Built once from the index's plan; rebuilt below only when the rows are read under lock.
        upserts = self._article_upserts(plan.rows) if known is not None else []
        if known is not None and not plan.retag and not to_archive and len(upserts) <= 1:
            # A single statement is atomic by itself: no BEGIN/COMMIT for the server to run.
            try:
                for query in upserts:
                    query.execute()
            except Exception as exc:
                note_step(exc, "writing articles")
                raise
            return plan.result(archived=0, hidden=())
        # MySQL/TiDB: everything below reaches the server in one round trip with BEGIN and COMMIT (two
        # when the rows must first be read under lock), however many statements it takes.
        try:
            with batched_transaction(self._db) as tx:
                if known is None:
                    plan = _Plan(user_id, articles, self._lock_existing(tx, user_id, slugs), now)
                    upserts = self._article_upserts(plan.rows)
                for query in upserts:
                    tx.add(query, "writing articles")
                if plan.retag:
                    self._queue_tag_rewrite(tx, user_id, plan.retag, plan.existing)
                keys = limits_of(self._db).keys(reserved=4)
                archive_slots = [
                    tx.add(
                        Article.update(archived=True, archived_at=now)
                        .where(Article.user == user_id, Article.slug.in_(chunk), ~Article.archived)
                        .bind(self._db),
                        "archiving articles",
                    )
                    for chunk in groups(to_archive, max_items=min(keys, KEY_CHUNK_SIZE))
                ]
        except Exception as exc:
            note_step(exc, "committing")  # a statement's failure already named its own step
            raise
        archived = sum(tx.rowcount(slot) for slot in archive_slots)
        # Archived slugs readers saw until now; without the index every one of them counts (a
        # notification too many costs a cache refresh, one too few leaves a stale page).
        hidden = [s for s in to_archive if index is None or (s in index and _served_before(index[s], now))]
        return plan.result(archived=archived, hidden=hidden if archived else ())

    def _article_upserts(self, rows: list[dict[str, Any]]) -> list[Any]:
        return upsert_queries(
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
        keys = limits_of(self._db).keys(reserved=1)
        for chunk in groups(slugs, max_items=min(keys, KEY_CHUNK_SIZE)):
            query = Article.select(
                Article.slug,
                Article.id,
                Article.content_hash,
                Article.published_at,
                Article.created_at,
                Article.updated_at,
                Article.archived,
                Article.tags_hash,
                Article.publish,
            ).where(Article.user == user_id, Article.slug.in_(chunk))
            if is_mysql(self._db):
                query = query.for_update()
            for row in tx.read(query.bind(self._db), "reading the stored articles"):
                existing[row[0]] = _Existing(*row)
        return existing

    def _queue_tag_rewrite(
        self,
        tx: StatementQueue,
        user_id: int,
        changed: Sequence[ParsedArticle],
        existing: dict[str, _Existing],
    ) -> None:
        """Make the changed articles' tags exactly their given tags (``function.store.tag_rewrite``)."""
        stale = [existing[a.slug].id for a in changed if a.slug in existing]  # new rows have no tags yet
        queue_tag_rewrite(self._db, tx, user_id, changed, stale)


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
    publish: bool

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
            stored.publish,
        )


def served(publish: bool, archived: bool, published_at: datetime | None, now: datetime) -> bool:
    """Whether readers see an article so: published, live and not scheduled for later (the read
    routes' rule)."""
    return bool(publish) and not archived and published_at is not None and published_at <= now


def _served_before(stored: StoredArticle | _Existing, now: datetime) -> bool:
    return served(stored.publish, stored.archived, stored.published_at, now)


class _Plan:
    """The rows to upsert and the articles whose tags must be rewritten, from what is stored."""

    def __init__(
        self, user_id: int, articles: Sequence[ParsedArticle], existing: dict[str, _Existing], now: datetime
    ) -> None:
        self.existing = existing
        self.rows: list[dict[str, Any]] = []
        self.retag: list[ParsedArticle] = []
        self.written = self.unchanged = 0
        self.published: list[str] = []
        self.updated: list[str] = []
        self.unpublished: list[str] = []
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
            row = _article_row(user_id, article, old, same, now)
            self.rows.append(row)
            self._note_what_readers_see(article.slug, old, row, same, now)

    def _note_what_readers_see(
        self, slug: str, old: _Existing | None, row: dict[str, Any], same: bool, now: datetime
    ) -> None:
        was = old is not None and _served_before(old, now)
        now_served = served(row["publish"], False, row["published_at"], now)
        if now_served and not was:
            self.published.append(slug)
        elif was and not now_served:
            self.unpublished.append(slug)
        elif was and not same:
            self.updated.append(slug)

    def result(self, *, archived: int, hidden: Sequence[str]) -> ApplyResult:
        return ApplyResult(
            written=self.written,
            unchanged=self.unchanged,
            archived=archived,
            published=tuple(self.published),
            updated=tuple(self.updated),
            unpublished=(*self.unpublished, *hidden),
        )


def tags_hash(tags: Sequence[str]) -> str:
    """A fingerprint of an article's tag set (order and duplicates do not matter)."""
    return hashlib.sha256("\n".join(sorted(set(tags))).encode()).hexdigest()


def _article_row(
    user_id: int, article: ParsedArticle, old: _Existing | None, same: bool, now: datetime
) -> dict[str, Any]:
    if old is None:
        created_at, updated_at = now, now
    else:
        created_at = old.created_at
        updated_at = old.updated_at if same else now
    return {
        "user": user_id,
        "slug": article.slug,
        "path": article.path,
        "blob_sha": article.blob_sha,
        "title": article.title,
        "type": article.type,
        "description": article.description,
        "thumbnail": article.thumbnail,
        "emoji": article.emoji,
        "content": article.content,
        "content_html": article.content_html,
        "toc": json.dumps([entry.as_json() for entry in article.toc], ensure_ascii=False),
        "content_hash": article.content_hash,
        "tags_hash": tags_hash(article.tags),
        "publish": article.publish,
        "archived": False,
        "published_at": publication_time(article, old.published_at if old else None, now),
        "archived_at": None,
        "created_at": created_at,
        "updated_at": updated_at,
    }


def publication_time(article: ParsedArticle, stored: datetime | None, now: datetime) -> datetime | None:
    """The front matter's time always wins (also over a stored one); else a stored time is kept (even if
    the article is unpublished later); else, once published, the slug's leading date or now."""
    if article.published_at is not None:
        return article.published_at
    if stored is not None:
        return stored
    if article.publish:
        return article.slug_date or now
    return None
