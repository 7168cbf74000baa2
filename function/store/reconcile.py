"""The reconcile: the index of a user's articles, and one transaction that applies a sync to it."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
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
    ArticleBody,
    FailedFile,
    to_naive_utc,
)
from function.store.records import (
    ApplyResult,
    RememberedFailure,
    StoredArticle,
)
from function.store.row_bytes import row_bytes_of
from function.store.search_index import indexed_article, queue_index_writes
from function.store.steps import note_step
from function.store.tag_rewrite import queue_tag_rewrite
from function.store.write_plan import Existing, WritePlan, served_before

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
    Article.render_fingerprint,
    Article.output_hash,
)
# Slugs, SHAs, hashes, flags and times never hold a tab; the path, which may, is packed last.
_PACKED_SEPARATOR = "\t"
_BODY_PRESERVE = (ArticleBody.content, ArticleBody.content_html, ArticleBody.toc)
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
    Article.content_hash,
    Article.tags_hash,
    Article.render_fingerprint,
    Article.output_hash,
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
        return _unpack_index(self._rows(_packed_index_query(user_id)))

    @_translated
    def row_bytes(self, user_id: int, slugs: Sequence[str]) -> dict[str, int]:
        """The bytes of each of these articles' rows (``function.store.row_bytes``), by slug: what
        archiving one rewrites. One SELECT per key chunk; none for no slugs."""
        sizes: dict[str, int] = {}
        if not slugs:
            return sizes
        size = row_bytes_of(self._db, Article)
        keys = limits_of(self._db).keys(reserved=1)
        try:
            for chunk in groups(sorted(set(slugs)), max_items=min(keys, KEY_CHUNK_SIZE)):
                query = Article.select(Article.slug, size).where(
                    Article.user == user_id, Article.slug.in_(chunk)
                )
                sizes.update((slug, int(weight)) for slug, weight in self._rows(query))
        except Exception as exc:
            note_step(exc, "measuring the articles to archive")
            raise
        return sizes

    @_translated
    def apply(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        archive_slugs: Sequence[str],
        now: datetime,
        *,
        index: Mapping[str, StoredArticle],
        render_fingerprint: str | None = None,
        reindex: bool = False,
    ) -> ApplyResult:
        """Write ``articles`` and archive ``archive_slugs`` for the user, all or nothing.

        Each article is two rows: its index row in ``articles`` and its body (Markdown, HTML, table of
        contents) in ``article_bodies``, written in the same transaction. A body is keyed by its
        article's id: the ids of new articles are read back after their rows are inserted (one more
        round trip, only when there are new articles).

        Per article: a new one gets created_at = updated_at = now; one whose content hash is the same
        (and is not archived) and whose HTML renders the same keeps updated_at (its path, blob SHA and
        render fingerprint are refreshed); any other gets updated_at = now. published_at is the front
        matter's time when it names one, else it is set the first time an article is published (the
        slug's leading date, its file's addition in the history, or now) and kept after
        (``publication_time``). Every given article is un-archived; its tags are replaced when they
        changed. Archiving sets archived and archived_at, keeps updated_at, and never touches a given
        slug.
        ``render_fingerprint``: what the articles were rendered with, recorded beside them.

        ``index`` is the caller's ``load_index`` read, taken while it holds ``user_lock`` (so no one
        else can have written since): the rows are not read again. There is no other way to apply: the
        worker, the CLI and the tests all hold the lock and pass the index.

        The search index's entries of the given articles whose content changed (of every given article
        with ``reindex``) are replaced, and the archived ones' removed, in the same transaction
        (``function.store.search_index``: it reads the rows it rewrites first, two more round trips on
        MySQL/TiDB, the second only when earlier articles share a block with the written ones).

        The statement count does not depend on the number of articles, except one more article INSERT
        per ``CHUNK_SIZE`` given articles (and one more key statement per ``KEY_CHUNK_SIZE``, one more
        INSERT of search postings per few hundred KB of them). When the whole write is one statement
        (articles whose content is unchanged, same tags, nothing archived) it runs on its own, without
        BEGIN/COMMIT. On MySQL/TiDB any other write is one round trip too (BEGIN, the statements and
        COMMIT sent together, see ``batched_transaction``), plus the search index's reads.
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
        known = {slug: Existing.of(index[slug]) for slug in slugs if slug in index}
        plan = WritePlan(user_id, articles, known, now, render_fingerprint)
        upserts = self._article_upserts(plan.rows)
        # The articles whose content changed (all given, with ``reindex``) are indexed again from what
        # was parsed (never read back), in the same transaction: the search never sees an article
        # without its terms, nor terms of one archived.
        indexed = [indexed_article(article) for article in (articles if reindex else plan.changed)]
        if not plan.retag and not to_archive and not plan.bodies and not indexed and len(upserts) <= 1:
            # A single statement is atomic by itself: no BEGIN/COMMIT for the server to run.
            try:
                for query in upserts:
                    query.execute()
            except Exception as exc:
                note_step(exc, "writing articles")
                raise
            return plan.result(archived=0, hidden=())
        # MySQL/TiDB: everything below reaches the server in one round trip with BEGIN and COMMIT,
        # however many statements it takes.
        try:
            with batched_transaction(self._db) as tx:
                for query in upserts:
                    tx.add(query, "writing articles")
                if plan.bodies:
                    self._queue_bodies(tx, user_id, plan.bodies, plan.existing)
                if plan.retag:
                    self._queue_tag_rewrite(tx, user_id, plan.retag, plan.existing)
                queue_index_writes(self._db, tx, user_id, indexed, to_archive)
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
        # Archived slugs readers saw until now.
        hidden = [s for s in to_archive if s in index and served_before(index[s], now)]
        return plan.result(archived=archived, hidden=hidden if archived else ())

    def _article_upserts(self, rows: list[dict[str, Any]]) -> list[Any]:
        return upsert_queries(
            self._db,
            Article,
            rows,
            conflict_target=[Article.user, Article.slug],
            preserve=_UPSERT_PRESERVE,
        )

    def _queue_bodies(
        self,
        tx: StatementQueue,
        user_id: int,
        bodies: Mapping[str, Mapping[str, Any]],
        existing: Mapping[str, Existing],
    ) -> None:
        """Queue the upserts of these body rows (by slug), after their articles' rows: the ids of
        articles that were not stored yet are read inside the transaction (its own writes)."""
        ids = {slug: existing[slug].id for slug in bodies if slug in existing}
        new = [slug for slug in bodies if slug not in ids]
        for chunk in groups(new, max_items=min(limits_of(self._db).keys(reserved=1), KEY_CHUNK_SIZE)):
            query = Article.select(Article.id, Article.slug).where(
                Article.user == user_id, Article.slug.in_(chunk)
            )
            ids.update((slug, int(article_id)) for article_id, slug in tx.read(query.bind(self._db)))
        rows = [{"article": ids[slug], **body} for slug, body in bodies.items()]
        for query in upsert_queries(
            self._db, ArticleBody, rows, conflict_target=[ArticleBody.article], preserve=_BODY_PRESERVE
        ):
            tx.add(query, "writing article bodies")

    def _queue_tag_rewrite(
        self,
        tx: StatementQueue,
        user_id: int,
        changed: Sequence[ParsedArticle],
        existing: dict[str, Existing],
    ) -> None:
        """Make the changed articles' tags exactly their given tags (``function.store.tag_rewrite``)."""
        stale = [existing[a.slug].id for a in changed if a.slug in existing]  # new rows have no tags yet
        queue_tag_rewrite(self._db, tx, user_id, changed, stale)


def _packed_index_query(user_id: int) -> Any:
    """The SELECT of ``_load_packed_index``."""
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
            fn.IFNULL(Article.render_fingerprint, ""),
            fn.IFNULL(Article.output_hash, ""),
            Article.path,
        )
    ).where(Article.user == user_id)


def _unpack_index(rows: Sequence[tuple[Any, ...]]) -> dict[str, StoredArticle]:
    """The rows of ``_packed_index_query``, split, by slug."""
    index: dict[str, StoredArticle] = {}
    for (packed,) in rows:
        (
            row_id,
            slug,
            blob,
            content,
            archived,
            published,
            created,
            updated,
            tags,
            publish,
            fingerprint,
            output,
            path,
        ) = packed.split(_PACKED_SEPARATOR, 12)
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
            render_fingerprint=fingerprint or None,
            output_hash=output or None,
        )
    return index
