"""The SQL form of tag filters: which articles a tag, or a ``TagFilter``, keeps.

A tag keeps the articles tagged with it or with a tag below it, ignoring case (on SQLite only ASCII
letters fold, as its ``LOWER`` folds no others). The conditions are ranges on the tag's path, never
LIKE: a ``%`` or ``_`` in a tag is a character, not a wildcard. The list, its totals, the facets, the
feed and the search restrict their queries with ``restrict``.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import peewee

from function.store.models import Article, ArticleTag, Tag
from function.store.tag_filter import TagFilter, normalised


def condition(tags: TagFilter, article_id: Any = Article.id) -> Any:
    """The WHERE condition on ``article_id`` (a column holding articles' ids) that keeps what ``tags``
    keeps: one semi-join for ``or``, one per tag for ``and``."""
    if tags.mode == "or" or len(tags.paths) == 1:
        return article_id.in_(articles_tagged(*tags.paths))
    return functools.reduce(operator.and_, (article_id.in_(articles_tagged(p)) for p in tags.paths))


def restrict(query: Any, tags: TagFilter | None, article_id: Any = Article.id) -> Any:
    """``query`` keeping only what ``tags`` keeps (all of it for None); ``article_id``: where the query
    has the article's id."""
    return query if tags is None else query.where(condition(tags, article_id))


def articles_tagged(*paths: str) -> Any:
    """The ids of articles tagged with one of ``paths`` or a tag below it, ignoring case. A range for
    "below": ``"0"`` is the character after ``"/"``, so [p + "/", p + "0") is exactly the paths that
    start with ``p/``."""
    path = peewee.fn.LOWER(Tag.path)
    terms = []
    for tag in paths:
        tag = normalised(tag)
        terms.append((path == tag) | ((path >= tag + "/") & (path < tag + "0")))
    return (
        ArticleTag.select(ArticleTag.article)
        .join(Tag, on=(ArticleTag.tag == Tag.id))
        .where(functools.reduce(operator.or_, terms))
    )
