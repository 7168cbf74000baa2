"""The read side: published articles for the read API."""

from __future__ import annotations

import logging
from typing import Any

from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.models import (
    Article,
    ArticleTag,
    Tag,
    User,
)
from function.store.records import (
    ArticleView,
)

log = logging.getLogger(__name__)


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
    Article.emoji,
)


class ReadQueries(StoreBase):
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
        emoji,
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
    )
