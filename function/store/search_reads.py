"""Reading the lexical search index: the published articles that match a query, best first.

Two statements whatever the blog's size (``lexical_page``). The first is one UNION of rows: the query
terms' packed postings (every block, ``function.search.postings``), the index's article count and
total length, the numbers of the articles the filters keep, and the user's row. The BM25 scores are
computed in the process over the decoded postings (numpy), with ``function.search.lexical``'s formula;
the second statement reads the summaries and tags of the page's articles, and of the articles tied
with its first or last score, so that the order (score, then newest first, then slug) is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import peewee

from function.search.lexical import INDEX_VERSION
from function.search.postings import bm25
from function.store.backends import is_mysql
from function.store.base import translated as _translated
from function.store.bounds import groups, limits_of
from function.store.models import Article, ArticleTag, SearchDocument, SearchPosting, Tag, User, utc_now
from function.store.reads import _SUMMARY_COLUMNS, ReadQueries, _text, _view
from function.store.records import ArticleView
from function.store.tag_filter import TagFilter

# Tag paths of one article, joined in the database by a character no tag path holds.
_TAG_SEPARATOR = "\x1f"
# MySQL's and TiDB's default group_concat_max_len: an answer this long may have been cut, and the tags
# of that article are read again on their own (a third statement, only then).
_CONCAT_MAX_BYTES = 1024


@dataclass(frozen=True)
class Filters:
    """The list's filters, as the search applies them."""

    type: str | None = None
    tag: str | None = None
    tags: TagFilter | None = None


NO_FILTERS = Filters()


@dataclass(frozen=True)
class ScoredPage:
    """A page of matches with their BM25 scores, best first, and how many articles match in all."""

    hits: list[tuple[ArticleView, float]]
    total: int


@dataclass(frozen=True)
class IndexStatus:
    """How much of a user's live (not archived) articles the lexical index holds."""

    articles: int
    indexed: int  # with rows in the index
    current: int  # indexed from the article's present content, by this version's tokeniser

    @property
    def missing(self) -> int:
        return self.articles - self.indexed

    @property
    def stale(self) -> int:
        return self.indexed - self.current


@dataclass(frozen=True)
class _Matches:
    """What the first statement tells: the kept articles holding any term, by score."""

    scores: dict[int, float]  # article number in the index (``search_documents.doc``) → BM25 score


# Kept article numbers per bitmap row: below 63 bits, so that SQLite's signed 64-bit SUM never overflows.
_KEPT_BITS = 32

# The summary row's published_at and slug (``_SUMMARY_COLUMNS``), for the order of tied scores.
_PUBLISHED = 8
_SLUG = 1


def _bitmap_docs(groups: list[int], masks: list[int]) -> Any:
    """The numbers set in bitmaps of ``_KEPT_BITS``: bit ``b`` of group ``g``'s mask is ``g * 32 + b``."""
    if not groups:
        return np.empty(0, dtype=np.int64)
    bits = (
        np.asarray(masks, dtype=np.uint64)[:, None] >> np.arange(_KEPT_BITS, dtype=np.uint64)
    ) & np.uint64(1)
    group_of, bit = np.nonzero(bits)
    return np.asarray(groups, dtype=np.int64)[group_of] * _KEPT_BITS + bit


class SearchReads(ReadQueries):
    @_translated
    def lexical_page(
        self,
        user_name: str,
        terms: Sequence[str],
        *,
        limit: int,
        offset: int,
        filters: Filters = NO_FILTERS,
        now: datetime | None = None,
    ) -> ScoredPage | None:
        """The published articles the filters keep that hold any of ``terms``, by BM25 score (ties:
        newest first), ``limit`` of them from ``offset``, with how many match; None for no such
        user. Two statements (see the module's docstring)."""
        now = now or utc_now()
        matches = self._matches(user_name, terms, filters, now)
        if matches is None:
            return None
        total = len(matches.scores)
        if offset >= total:
            return ScoredPage([], total)
        hits = self._page(user_name, matches, filters, now, limit=limit, offset=offset)
        return ScoredPage(hits, total)

    @_translated
    def lexical_ranking(
        self,
        user_name: str,
        terms: Sequence[str],
        *,
        limit: int,
        filters: Filters = NO_FILTERS,
        now: datetime | None = None,
    ) -> list[tuple[ArticleView, float]] | None:
        """The best ``limit`` matches with their scores (the lexical half of a hybrid search); None
        for no such user."""
        page = self.lexical_page(user_name, terms, limit=limit, offset=0, filters=filters, now=now)
        return None if page is None else page.hits

    @_translated
    def summaries_of(
        self,
        user_name: str,
        article_ids: Sequence[int],
        *,
        filters: Filters = NO_FILTERS,
        now: datetime | None = None,
    ) -> dict[int, ArticleView]:
        """The summaries of those of ``article_ids`` that are published and kept by the filters, by id
        (the semantic half's articles, which come as ids)."""
        if not article_ids:
            return {}
        query = self._filtered(
            user_name, _SUMMARY_COLUMNS, type=filters.type, tag=filters.tag, tags=filters.tags, now=now
        ).where(Article.id.in_(list(article_ids)))
        rows = self._rows(query)
        tags_of = self._tags_of([row[0] for row in rows])
        return {row[0]: _view(row, tags_of.get(row[0], ())) for row in rows}

    @_translated
    def index_status(self, user_id: int) -> IndexStatus:
        """The user's live articles, how many the index holds, and how many of those are current: one
        statement."""
        current = peewee.Case(
            None,
            [
                (
                    (SearchDocument.content_hash == Article.content_hash)
                    & (SearchDocument.version == INDEX_VERSION),
                    1,
                )
            ],
            0,
        )
        query = (
            Article.select(
                peewee.fn.COUNT(Article.id), peewee.fn.COUNT(SearchDocument.slug), peewee.fn.SUM(current)
            )
            .join(
                SearchDocument,
                peewee.JOIN.LEFT_OUTER,
                on=(SearchDocument.user == Article.user) & (SearchDocument.slug == Article.slug),
            )
            .where(Article.user == user_id, ~Article.archived)
        )
        row = self._first(query)
        articles, indexed, fresh = row if row is not None else (0, 0, 0)
        return IndexStatus(int(articles or 0), int(indexed or 0), int(fresh or 0))

    def _matches(
        self, user_name: str, terms: Sequence[str], filters: Filters, now: datetime
    ) -> _Matches | None:
        """The first statement: one UNION of rows, in a SELECT (as ``tag_facets`` does), then the BM25
        scores in the process. The BM25 figures (entries per term, count and average length) are the
        blog's whole index's; only which articles are kept applies the filters. None: no such user."""
        kept_filters: dict[str, Any] = {
            "type": filters.type,
            "tag": filters.tag,
            "tags": filters.tags,
            "now": now,
        }
        none = peewee.Value(None)
        postings = (
            # Named here: the derived table's columns take the first SELECT's names, which must differ.
            SearchPosting.select(
                peewee.Value("postings").alias("kind"),
                SearchPosting.term.alias("term"),
                SearchPosting.block.alias("first"),
                peewee.Value(None).alias("second"),
                SearchPosting.postings.alias("packed"),
            )
            .join(User, on=(SearchPosting.user == User.id))
            .where(User.name == user_name, SearchPosting.term.in_(list(terms)))
        )
        documents = (
            SearchDocument.select(
                peewee.Value("docs"),
                none,
                peewee.fn.COUNT(SearchDocument.slug),
                peewee.fn.SUM(SearchDocument.length),
                none,
            )
            .join(User, on=(SearchDocument.user == User.id))
            .where(User.name == user_name)
        )
        # The kept articles' numbers as bitmaps of 32 (a 5,000-article blog is ~160 rows, not 5,000):
        # the sum of distinct powers of two is their OR, on every backend.
        group = self._whole_division(SearchDocument.doc, _KEPT_BITS)
        bit = peewee.Expression(peewee.Value(1), "<<", SearchDocument.doc - group * _KEPT_BITS)
        kept = (
            self._filtered(
                user_name, (peewee.Value("kept"), none, group, peewee.fn.SUM(bit), none), **kept_filters
            )
            .join(
                SearchDocument,
                on=(SearchDocument.user == Article.user) & (SearchDocument.slug == Article.slug),
            )
            .group_by(group)
        )
        user = User.select(peewee.Value("user"), none, User.id, none, none).where(User.name == user_name)
        union = postings.union_all(documents).union_all(kept).union_all(user)
        query = peewee.Select(from_list=[union.alias("search_rows")], columns=[peewee.SQL("*")])
        rows = self._db.execute(query).fetchall()
        if not any(_text(row[0]) == "user" for row in rows):
            return None
        by_term: dict[str, list[bytes]] = {}
        groups_kept: list[int] = []
        masks: list[int] = []
        documents_count, total_length = 0, 0.0
        for kind, term, first, second, value in rows:
            name = _text(kind)
            if name == "postings":
                by_term.setdefault(_text(term), []).append(bytes(value))
            elif name == "docs":
                documents_count, total_length = int(first or 0), float(second or 0)
            elif name == "kept":
                groups_kept.append(int(first))
                masks.append(int(second))
        average = total_length / documents_count if documents_count else 1.0
        scored = bm25(by_term, documents_count, average)
        keep = np.isin(scored.docs, _bitmap_docs(groups_kept, masks))
        docs, scores = scored.docs[keep], scored.scores[keep]
        return _Matches(dict(zip(docs.tolist(), scores.tolist(), strict=True)))

    def _page(
        self,
        user_name: str,
        matches: _Matches,
        filters: Filters,
        now: datetime,
        *,
        limit: int,
        offset: int,
    ) -> list[tuple[ArticleView, float]]:
        """The second statement: the summaries and tags of the page's articles and of those tied with
        its first or last score, ordered by score, then newest first, then slug (both descending)."""
        ranked = sorted(matches.scores.values(), reverse=True)
        highest, lowest = ranked[offset], ranked[min(offset + limit, len(ranked)) - 1]
        before = sum(1 for score in ranked if score > highest)  # articles ahead of the page's scores
        docs = [d for d, score in matches.scores.items() if lowest <= score <= highest]
        tag_paths = (
            ArticleTag.select(self._concat(Tag.path))
            .join(Tag, on=(ArticleTag.tag == Tag.id))
            .where(ArticleTag.article == Article.id)
        )
        rows: list[tuple[Any, ...]] = []
        # One statement but for ties past a statement's keys (thousands of articles scoring the same).
        for chunk in groups(docs, max_items=limits_of(self._db).keys(reserved=8)):
            query = (
                self._filtered(
                    user_name,
                    (*_SUMMARY_COLUMNS, tag_paths, SearchDocument.doc),
                    type=filters.type,
                    tag=filters.tag,
                    tags=filters.tags,
                    now=now,
                )
                .join(
                    SearchDocument,
                    on=(SearchDocument.user == Article.user) & (SearchDocument.slug == Article.slug),
                )
                .where(SearchDocument.doc.in_(chunk))
            )
            rows += self._rows(query)
        rows.sort(key=lambda row: row[_SLUG], reverse=True)
        rows.sort(key=lambda row: row[_PUBLISHED], reverse=True)
        rows.sort(key=lambda row: matches.scores[row[-1]], reverse=True)
        rows = rows[offset - before : offset - before + limit]
        cut = [
            row[0]
            for row in rows
            if row[-2] is not None and len(_text(row[-2]).encode()) >= _CONCAT_MAX_BYTES
        ]
        reread = self._tags_of(cut) if cut and is_mysql(self._db) else {}
        hits = []
        for row in rows:
            paths = _text(row[-2]).split(_TAG_SEPARATOR) if row[-2] is not None else []
            tags = reread.get(row[0], tuple(sorted(paths)))
            hits.append((_view(row[:-2], tags), matches.scores[row[-1]]))
        return hits

    def _whole_division(self, value: Any, divisor: int) -> Any:
        """``value`` divided by ``divisor``, rounded down (non-negative integers): ``DIV`` on MySQL and
        TiDB, whose ``/`` gives a decimal; SQLite's ``/`` of integers is already whole."""
        if is_mysql(self._db):
            # A NodeList, not an Expression: Peewee renders an Expression's "DIV" as "/".
            return peewee.NodeList((value, peewee.SQL("DIV"), peewee.Value(divisor)), parens=True)
        return peewee.Expression(value, "/", divisor)

    def _concat(self, column: Any) -> Any:
        """GROUP_CONCAT of ``column`` with ``_TAG_SEPARATOR``, as each backend spells it."""
        if is_mysql(self._db):
            return peewee.fn.GROUP_CONCAT(
                peewee.NodeList((column, peewee.SQL("SEPARATOR"), peewee.Value(_TAG_SEPARATOR)))
            )
        return peewee.fn.GROUP_CONCAT(column, _TAG_SEPARATOR)
