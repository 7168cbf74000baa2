"""The read side: published articles for the read API.

"Published" means ``publish`` set, not archived, and ``published_at`` not after ``now``: an article
scheduled for later is served by no read route until its time comes (nothing needs to be pushed then).
Order everywhere: newest ``published_at`` first, ties by slug descending, the same on every backend
(slugs compare byte-exact), so a keyset (published_at, slug) pages through them without gaps.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import peewee

from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.bounds import groups, limits_of
from function.store.models import (
    Article,
    ArticleBody,
    ArticleTag,
    Tag,
    User,
    utc_now,
)
from function.store.records import ArticleView, Keyset, Page, SitemapEntry
from function.store.tag_filter import TagFilter
from function.store.tagged import articles_tagged, restrict

log = logging.getLogger(__name__)


_VIEW_COLUMNS = (
    Article.id,
    Article.slug,
    Article.title,
    ArticleBody.content,
    ArticleBody.content_html,
    Article.description,
    Article.type,
    Article.thumbnail,
    Article.published_at,
    Article.created_at,
    Article.updated_at,
    Article.emoji,
    ArticleBody.toc,
)

# A summary never needs the article's body, and never reads its table: TiDB reads a row whole, so
# only the statements that serve a body join ``article_bodies`` (``_with_bodies``). The columns stay
# in place (``_view`` reads rows by position) as empty strings.
_SUMMARY_COLUMNS = tuple(
    peewee.Value("") if column.model is ArticleBody else column for column in _VIEW_COLUMNS
)


@dataclass(frozen=True)
class NumberedPage:
    """A page by number: its summaries (``content`` and ``content_html`` are "") and how many articles
    the filters keep in all."""

    articles: list[ArticleView]
    total: int


@dataclass(frozen=True)
class ArticleCard:
    """What an article's share image is made from."""

    slug: str
    title: str
    thumbnail: str | None


class ReadQueries(StoreBase):
    @_translated
    def published_page(
        self,
        user_name: str,
        *,
        limit: int,
        after: Keyset | None = None,
        type: str | None = None,
        tag: str | None = None,
        now: datetime | None = None,
        tags: TagFilter | None = None,
    ) -> Page | None:
        """One page of the user's published articles (without their bodies); None when there is no
        such user. ``type`` and ``tag`` match case-insensitively; ``tag="tech/aws"`` keeps articles
        tagged ``tech/aws`` or below it; ``tags`` filters further. Two statements whatever the user's
        size: the page (one row more than ``limit``, to know whether another page follows), then the
        tags of exactly those rows, or, when the page is empty, whether the user exists."""
        query = self._filtered(user_name, _SUMMARY_COLUMNS, type=type, tag=tag, tags=tags, now=now)
        if after is not None:
            query = query.where(
                (Article.published_at < after.published_at)
                | ((Article.published_at == after.published_at) & (Article.slug < after.slug))
            )
        rows = self._rows(_newest_first(query).limit(limit + 1))
        if not rows:
            return Page([], None) if self._user_exists(user_name) else None
        rows, more = rows[:limit], len(rows) > limit
        tags_of = self._tags_of([row[0] for row in rows])
        views = [_view(row, tags_of.get(row[0], ())) for row in rows]
        last = views[-1]
        next_key = Keyset(last.published_at, last.slug) if more and last.published_at else None
        return Page(views, next_key)

    @_translated
    def numbered_page(
        self,
        user_name: str,
        *,
        page: int,
        per_page: int,
        type: str | None = None,
        tag: str | None = None,
        tags: TagFilter | None = None,
        now: datetime | None = None,
    ) -> NumberedPage | None:
        """Page ``page`` (from 1) of ``per_page`` summaries, in read order, with the number of articles
        the filters keep; None when there is no such user. Filters as ``published_page``. Two
        statements whatever the user's size: the page with the total as a column of each row (an
        uncorrelated subquery, run once), then the tags of those rows; or, for a page past the end,
        the user's id with the total."""
        now = now or utc_now()  # one instant for the page and its total
        query = self._filtered(user_name, _SUMMARY_COLUMNS, type=type, tag=tag, tags=tags, now=now)
        total = self._filtered(
            user_name, (peewee.fn.COUNT(Article.id),), type=type, tag=tag, tags=tags, now=now
        )
        paged = _newest_first(query.select_extend(total.alias("total_count")))
        rows = self._rows(paged.limit(per_page).offset((page - 1) * per_page))
        if not rows:
            found = self._first(
                User.select(User.id, total.alias("total_count")).where(User.name == user_name)
            )
            return None if found is None else NumberedPage([], int(found[1]))
        tags_of = self._tags_of([row[0] for row in rows])
        return NumberedPage([_view(row[:-1], tags_of.get(row[0], ())) for row in rows], int(rows[0][-1]))

    @_translated
    def tag_facets(
        self,
        user_name: str,
        *,
        type: str | None = None,
        tag: str | None = None,
        tags: TagFilter | None = None,
        now: datetime | None = None,
    ) -> list[tuple[frozenset[str], int]] | None:
        """Each distinct set of tags among the published articles the filters keep, with how many of
        them have exactly that set (articles without tags left out); None for no such user.

        One statement, grouped in the database: a blog has far fewer tag sets than (article, tag)
        pairs, and every row costs the client more than the server (tens of rows for thousands of
        articles). Its rows: each set as its tags' ids (``GROUP_CONCAT``: at most 100 tags of an
        article, so within the 1,024 bytes TiDB and MySQL allow by default) with its count, the ids
        and paths of the tags those sets use, and the user's own row, so that an empty answer still
        says whether the user exists. Wrapped in a SELECT: a statement starting with "(" would not be
        taken for a read on a kept connection, which then costs a ping first."""
        now = now or utc_now()
        filters: dict[str, Any] = {"type": type, "tag": tag, "tags": tags, "now": now}
        tag_set = peewee.fn.GROUP_CONCAT(ArticleTag.tag).alias("tag_set")
        per_article = (
            self._filtered(user_name, (tag_set,), **filters)
            .join(ArticleTag, on=(ArticleTag.article == Article.id))
            .group_by(Article.id)
            .alias("per_article")
        )
        sets = peewee.Select(
            from_list=[per_article],
            columns=[
                peewee.Value("set"),
                per_article.c.tag_set,
                peewee.fn.COUNT(peewee.SQL("*")),
                peewee.Value(None),
            ],
        ).group_by(per_article.c.tag_set)
        kept = self._filtered(user_name, (Article.id,), **filters)
        used = ArticleTag.select(ArticleTag.tag).where(ArticleTag.article.in_(kept))
        paths = Tag.select(peewee.Value("tag"), Tag.id, peewee.Value(None), Tag.path).where(Tag.id.in_(used))
        user = User.select(peewee.Value("user"), User.id, peewee.Value(None), peewee.Value(None)).where(
            User.name == user_name
        )
        union = sets.union_all(paths).union_all(user)
        query = peewee.Select(from_list=[union.alias("facet_rows")], columns=[peewee.SQL("*")])
        # The cursor's own rows: no model rows to build.
        rows = self._db.execute(query).fetchall()
        path_of = {_whole(value): path for kind, value, _, path in rows if _text(kind) == "tag"}
        if not any(_text(kind) == "user" for kind, *_ in rows):
            return None
        return [
            (frozenset(path_of[int(tag_id)] for tag_id in _text(value).split(",")), int(articles))
            for kind, value, articles, _ in rows
            if _text(kind) == "set"
        ]

    @_translated
    def article_cards(self, user_id: int, slugs: Collection[str]) -> dict[str, ArticleCard]:
        """Title and thumbnail of the user's articles named ``slugs``, published or not (what the share
        image is made from), by slug; slugs with no row are left out. One SELECT per as many slugs as a
        statement may hold."""
        found: dict[str, ArticleCard] = {}
        for chunk in groups(list(slugs), max_items=limits_of(self._db).keys(reserved=1)):
            query = Article.select(Article.slug, Article.title, Article.thumbnail).where(
                Article.user == user_id, Article.slug.in_(chunk)
            )
            for slug, title, thumbnail in self._rows(query):
                found[slug] = ArticleCard(slug, title, thumbnail)
        return found

    @_translated
    def published_articles(
        self,
        user_name: str,
        type: str | None = None,
        tag: str | None = None,
        *,
        limit: int | None = None,
        now: datetime | None = None,
        tags: TagFilter | None = None,
    ) -> list[ArticleView] | None:
        """Full articles (bodies included), in read order, at most ``limit``: the feed's 20 newest,
        or every one for the CLI and tests. None when there is no such user. Two statements."""
        query = _newest_first(
            _with_bodies(self._filtered(user_name, _VIEW_COLUMNS, type=type, tag=tag, tags=tags, now=now))
        )
        if limit is not None:
            query = query.limit(limit)
        rows = self._rows(query)
        if not rows:
            return [] if self._user_exists(user_name) else None
        tags_of = self._tags_of([row[0] for row in rows])
        return [_view(row, tags_of.get(row[0], ())) for row in rows]

    @_translated
    def published_article(
        self, user_name: str, slug: str, *, now: datetime | None = None
    ) -> ArticleView | None:
        """One published article, or None (unknown user or slug, draft, archived, scheduled)."""
        query = _with_bodies(self._filtered(user_name, _VIEW_COLUMNS, now=now)).where(Article.slug == slug)
        row = self._first(query)
        if row is None:
            return None
        tags = self._tags_of([row[0]])
        return _view(row, tags.get(row[0], ()))

    @_translated
    def published_tag_paths(
        self, user_name: str, *, now: datetime | None = None
    ) -> list[tuple[int, str]] | None:
        """(article id, tag path) for every tag of every published article; None for no such user."""
        published = self._filtered(user_name, (Article.id,), now=now)
        query = (
            ArticleTag.select(ArticleTag.article, Tag.path)
            .join(Tag, on=(ArticleTag.tag == Tag.id))
            .where(ArticleTag.article.in_(published))
        )
        rows = [(article_id, path) for article_id, path in self._rows(query)]
        if not rows and not self._user_exists(user_name):
            return None
        return rows

    @_translated
    def served_count(self, user_name: str, *, now: datetime | None = None) -> int:
        """How many articles readers see of the user now (0 for no such user): one COUNT."""
        return int(self._filtered(user_name, (Article.id,), now=now).bind(self._db).count())

    @_translated
    def sitemap_entries(self, user_name: str, *, now: datetime | None = None) -> list[SitemapEntry] | None:
        """Slug and times of every published article, in read order; None for no such user."""
        columns = (Article.slug, Article.published_at, Article.updated_at)
        rows = self._rows(_newest_first(self._filtered(user_name, columns, now=now)))
        if not rows and not self._user_exists(user_name):
            return None
        return [SitemapEntry(slug, published, updated) for slug, published, updated in rows]

    def _filtered(
        self,
        user_name: str,
        columns: tuple[Any, ...],
        *,
        type: str | None = None,
        tag: str | None = None,
        tags: TagFilter | None = None,
        now: datetime | None = None,
    ) -> Any:
        query = (
            Article.select(*columns)
            .join(User, on=(Article.user == User.id))
            .where(
                User.name == user_name,
                # Equalities, not bare flags: the (user, publish, archived, published_at, slug) index
                # is used only for columns compared with "=".
                Article.publish == True,  # noqa: E712
                Article.archived == False,  # noqa: E712
                Article.published_at.is_null(False),
                Article.published_at <= (now or utc_now()),
            )
        )
        if type is not None:
            query = query.where(peewee.fn.LOWER(Article.type) == type.lower())
        if tag is not None:
            query = query.where(Article.id.in_(articles_tagged(tag)))
        return restrict(query, tags)

    def _user_exists(self, user_name: str) -> bool:
        return bool(User.select(User.id).where(User.name == user_name).bind(self._db).exists())

    def _tags_of(self, article_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """The tags of these articles: one SELECT per as many ids as a statement may hold (a page is
        one; every article of a large blog, for the CLI and the feed's callers, a few)."""
        found: dict[int, list[str]] = {}
        for chunk in groups(article_ids, max_items=limits_of(self._db).keys(reserved=0)):
            # A LEFT JOIN (every pair has its tag): the pairs of these ids drive the join, read by
            # the primary key. With an inner join an optimizer may start from the few tags and read
            # every pair of every article carrying them.
            query = (
                ArticleTag.select(ArticleTag.article, Tag.path)
                .join(Tag, peewee.JOIN.LEFT_OUTER, on=(ArticleTag.tag == Tag.id))
                .where(ArticleTag.article.in_(chunk))
            )
            for article_id, path in self._rows(query):
                found.setdefault(article_id, []).append(path)
        return {article_id: tuple(sorted(paths)) for article_id, paths in found.items()}


def _text(value: Any) -> str:
    """A value of a UNION's column as text: MySQL may hand over a mixed column's values as bytes."""
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)


def _whole(value: Any) -> int:
    return int(_text(value))


def _with_bodies(query: Any) -> Any:
    """``query`` joined to each article's body row (one point read by key per article)."""
    return query.join_from(Article, ArticleBody, on=(ArticleBody.article == Article.id))


def _newest_first(query: Any) -> Any:
    return query.order_by(Article.published_at.desc(), Article.slug.desc())


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
        emoji,
        toc,
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
        emoji=emoji,
        toc=tuple(json.loads(toc)) if toc else (),
    )
