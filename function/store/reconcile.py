"""The reconcile: the index of a user's articles, and one transaction that applies a sync to it."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import peewee
from peewee import fn

from function.articles.parsed import ParsedArticle
from function.store.backends import is_mysql
from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.batching import (
    CHUNK_SIZE,
    KEY_CHUNK_SIZE,
    StatementQueue,
    batched_transaction,
    chunked,
    upsert_many,
    upsert_queries,
)
from function.store.models import (
    Article,
    ArticleTag,
    FailedFile,
    Tag,
    to_naive_utc,
)
from function.store.records import (
    ApplyResult,
    RememberedFailure,
    StoredArticle,
)

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
        with self._db.atomic():
            for chunk in chunked(forget, KEY_CHUNK_SIZE):
                FailedFile.delete().where(FailedFile.user == user_id, FailedFile.slug.in_(list(chunk))).bind(
                    self._db
                ).execute()
            if rows:
                upsert_many(
                    self._db,
                    FailedFile,
                    rows,
                    conflict_target=[FailedFile.user, FailedFile.slug],
                    preserve=(FailedFile.path, FailedFile.blob_sha, FailedFile.message),
                )

    def _load_packed_index(self, user_id: int) -> dict[str, StoredArticle]:
        """``load_index`` on MySQL/TiDB, with each row packed by the server into one tab-separated string.

        PyMySQL decodes rows in pure Python, column by column: ten columns of a thousand articles cost
        it about 35 ms of CPU, as much as the round trip itself, and every push of a large blog pays
        it. One string per row is split in C and its times parsed with ``fromisoformat`` (about 10 ms).
        The path, the one column that may hold a tab, comes last and is split off whole."""
        return unpack_index(self._rows(packed_index_query(user_id)))

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
        one_statement = (
            known is not None and not plan.retag and not to_archive and len(plan.rows) <= CHUNK_SIZE
        )
        if one_statement:
            # A single statement is atomic by itself: no BEGIN/COMMIT for the server to run.
            self._upsert_articles(plan.rows)
            return plan.result(archived=0, hidden=())
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
        # Archived slugs readers saw until now; without the index every one of them counts (a
        # notification too many costs a cache refresh, one too few leaves a stale page).
        hidden = [s for s in to_archive if index is None or (s in index and _served_before(index[s], now))]
        return plan.result(archived=archived, hidden=hidden if archived else ())

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
                Article.publish,
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


def packed_index_query(user: Any) -> Any:
    """The SELECT of ``_load_packed_index`` (``user``: an id, or a subquery giving one)."""
    return Article.select(
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
    ).where(Article.user == user)


def unpack_index(rows: Sequence[tuple[Any, ...]]) -> dict[str, StoredArticle]:
    """The rows of ``packed_index_query``, split, by slug."""
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
