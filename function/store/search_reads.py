"""Reading the lexical search index: the published articles that match a query, best first.

Two statements whatever the blog's size (``lexical_page``): the query's statistics (how many of the
articles the filters keep hold each term, how many are indexed and their total length, how many match,
and whether the user exists), then the page itself, its BM25 scores summed by the database over the
query terms' rows, with each article's summary columns and tags. The score of each row uses the first
statement's figures as bound numbers (``function.search.lexical`` has the formula), so no logarithm
has to run in SQL (SQLite may be built without one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import peewee

from function.search.lexical import INDEX_VERSION, K1, B, idf
from function.store.backends import is_mysql
from function.store.base import translated as _translated
from function.store.models import Article, ArticleTag, SearchDocument, SearchTerm, Tag, User, utc_now
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
class _Statistics:
    documents: int
    average_length: float
    containing: dict[str, int]
    matching: int


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
        stats = self._statistics(user_name, terms, filters, now)
        if stats is None:
            return None
        if not stats.matching or offset >= stats.matching:
            return ScoredPage([], stats.matching)
        hits = self._scored(user_name, terms, stats, filters, now, limit=limit, offset=offset)
        return ScoredPage(hits, stats.matching)

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

    def _statistics(
        self, user_name: str, terms: Sequence[str], filters: Filters, now: datetime
    ) -> _Statistics | None:
        """The first statement: one UNION of small rows, in a SELECT (as ``tag_facets`` does). The
        BM25 figures (document frequencies, count and average length) are the blog's whole index's,
        read as ranges of the terms' primary key; only the number of matches applies the filters."""
        kept: dict[str, Any] = {"type": filters.type, "tag": filters.tag, "tags": filters.tags, "now": now}
        per_term = (
            SearchTerm.select(
                peewee.Value("df"), SearchTerm.term, peewee.fn.COUNT(peewee.SQL("*")), peewee.Value(None)
            )
            .join(User, on=(SearchTerm.user == User.id))
            .where(User.name == user_name, SearchTerm.term.in_(list(terms)))
            .group_by(SearchTerm.term)
        )
        documents = (
            SearchDocument.select(
                peewee.Value("docs"),
                peewee.Value(None),
                peewee.fn.COUNT(SearchDocument.slug),
                peewee.fn.SUM(SearchDocument.length),
            )
            .join(User, on=(SearchDocument.user == User.id))
            .where(User.name == user_name)
        )
        holding = (
            SearchTerm.select(SearchTerm.slug)
            .join(User, on=(SearchTerm.user == User.id))
            .where(User.name == user_name, SearchTerm.term.in_(list(terms)))
        )
        matching = self._filtered(
            user_name,
            (peewee.Value("hits"), peewee.Value(None), peewee.fn.COUNT(Article.id), peewee.Value(None)),
            **kept,
        ).where(Article.slug.in_(holding))
        user = User.select(peewee.Value("user"), peewee.Value(None), User.id, peewee.Value(None)).where(
            User.name == user_name
        )
        union = per_term.union_all(documents).union_all(matching).union_all(user)
        query = peewee.Select(from_list=[union.alias("search_stats")], columns=[peewee.SQL("*")])
        rows = self._db.execute(query).fetchall()
        kinds = {_text(kind) for kind, *_ in rows}
        if "user" not in kinds:
            return None
        containing: dict[str, int] = {}
        documents_count, total_length, hits = 0, 0.0, 0
        for kind, term, count, length in rows:
            name = _text(kind)
            if name == "df":
                containing[_text(term)] = int(count)
            elif name == "docs":
                documents_count, total_length = int(count or 0), float(length or 0)
            elif name == "hits":
                hits = int(count or 0)
        average = total_length / documents_count if documents_count else 1.0
        return _Statistics(documents_count, max(average, 1.0), containing, hits)

    def _scored(
        self,
        user_name: str,
        terms: Sequence[str],
        stats: _Statistics,
        filters: Filters,
        now: datetime,
        *,
        limit: int,
        offset: int,
    ) -> list[tuple[ArticleView, float]]:
        """The second statement: the page, scored, with each article's tags."""
        weights = [(t, idf(stats.documents, n)) for t, n in stats.containing.items()]
        frequency = SearchTerm.frequency * 1.0  # a float on every backend: SQLite divides integers whole
        saturation = (
            frequency
            * (K1 + 1.0)
            / (frequency + SearchTerm.length * (K1 * B / stats.average_length) + K1 * (1.0 - B))
        )
        score = peewee.fn.SUM(peewee.Case(SearchTerm.term, weights, 0.0) * saturation)
        # Joined to the user by name (not compared with a subquery), so that the planner reads each
        # term's rows as a range of the terms' primary key (user, term, slug).
        scores = (
            SearchTerm.select(SearchTerm.slug, score.alias("score"))
            .join(User, on=(SearchTerm.user == User.id))
            .where(User.name == user_name, SearchTerm.term.in_([t for t, _ in weights]))
            .group_by(SearchTerm.slug)
            .alias("scores")
        )
        tag_paths = (
            ArticleTag.select(self._concat(Tag.path))
            .join(Tag, on=(ArticleTag.tag == Tag.id))
            .where(ArticleTag.article == Article.id)
        )
        query = (
            self._filtered(
                user_name,
                (*_SUMMARY_COLUMNS, scores.c.score, tag_paths),
                type=filters.type,
                tag=filters.tag,
                tags=filters.tags,
                now=now,
            )
            .join(scores, on=(scores.c.slug == Article.slug))
            .order_by(scores.c.score.desc(), Article.published_at.desc(), Article.slug.desc())
            .limit(limit)
            .offset(offset)
        )
        rows = self._rows(query)
        cut = [
            row[0]
            for row in rows
            if row[-1] is not None and len(_text(row[-1]).encode()) >= _CONCAT_MAX_BYTES
        ]
        reread = self._tags_of(cut) if cut and is_mysql(self._db) else {}
        hits = []
        for row in rows:
            paths = _text(row[-1]).split(_TAG_SEPARATOR) if row[-1] is not None else []
            tags = reread.get(row[0], tuple(sorted(paths)))
            hits.append((_view(row[:-2], tags), float(row[-2])))
        return hits

    def _concat(self, column: Any) -> Any:
        """GROUP_CONCAT of ``column`` with ``_TAG_SEPARATOR``, as each backend spells it."""
        if is_mysql(self._db):
            return peewee.fn.GROUP_CONCAT(
                peewee.NodeList((column, peewee.SQL("SEPARATOR"), peewee.Value(_TAG_SEPARATOR)))
            )
        return peewee.fn.GROUP_CONCAT(column, _TAG_SEPARATOR)
