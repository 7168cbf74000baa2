"""Rewriting the tags of changed articles inside the reconcile's transaction, in bounded statements.

The statements need no answer from the server first (new articles' ids and new tags' ids are looked
up by the INSERT ... SELECT itself), so they travel with the rest of the transaction. Every statement
stays inside the database's limits (``function.store.bounds``): keys per ``IN`` list and rows per INSERT
by host parameters and bytes, and the new pairs as one exact SELECT per tag set (articles with the same
tags share one), at most ``terms`` of them joined by UNION ALL per statement. A repository where nearly
every article has a tag set of its own costs a few more statements, never a deeper expression (an OR
of one nested term per tag set overflowed SQLite's parser, and defeats the indexes on MySQL).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import peewee

from function.articles.parsed import ParsedArticle
from function.store.batching import KEY_CHUNK_SIZE, StatementQueue
from function.store.bounds import StatementLimits, groups, limits_of, row_bytes, value_bytes
from function.store.models import Article, ArticleTag, Tag

Term = tuple[list[str], list[str]]  # (tag paths, slugs): every pair of them is wanted


def queue_tag_rewrite(
    db: peewee.Database,
    tx: StatementQueue,
    user_id: int,
    changed: Sequence[ParsedArticle],
    stale_ids: Sequence[int],
) -> None:
    """Make the ``changed`` articles' tags exactly their given tags; ``stale_ids`` are the ids of
    those already stored (new rows have no tags yet)."""
    limits = limits_of(db)
    for chunk in groups(stale_ids, max_items=min(limits.keys(reserved=0), KEY_CHUNK_SIZE)):
        tx.add(ArticleTag.delete().where(ArticleTag.article.in_(chunk)).bind(db), "removing old tags")

    paths = sorted({tag for a in changed for tag in a.tags})
    if not paths:
        return
    # The user's own tag rows (``models.Tag``): no other blog's sync ever locks them.
    tag_rows = [{"user": user_id, "path": p} for p in paths]
    for rows in groups(
        tag_rows,
        max_items=min(limits.rows(2), KEY_CHUNK_SIZE),
        weights=[(row_bytes, limits.statement_bytes)],
    ):
        tx.add(Tag.insert_many(rows).on_conflict_ignore().bind(db), "writing tags")
    by_tag_set: dict[tuple[str, ...], list[str]] = {}
    for article in changed:
        if article.tags:
            by_tag_set.setdefault(tuple(sorted(set(article.tags))), []).append(article.slug)
    for statement in pair_inserts(db, user_id, by_tag_set, limits):
        tx.add(statement, "writing tags")


def pair_inserts(
    db: peewee.Database,
    user_id: int,
    by_tag_set: Mapping[tuple[str, ...], list[str]],
    limits: StatementLimits,
) -> Iterator[PairInsert]:
    """The INSERT ... SELECT statements of the wanted (article, tag) pairs."""
    terms = list(_pair_terms(by_tag_set, limits.keys(reserved=2)))
    for group in groups(
        terms,
        max_items=limits.terms,
        weights=[(_term_keys, limits.parameters), (_term_bytes, limits.statement_bytes)],
    ):
        yield PairInsert(db, user_id, group)


class PairInsert:
    """``INSERT INTO article_tags SELECT ... UNION ALL SELECT ...``: one exact, index-driven SELECT per
    term (the tag sets' slugs are disjoint, so no pair comes twice). Its text is written here rather
    than by Peewee, which renders a UNION of a hundred SELECTs as a hundred nested queries, one level
    per SELECT, in a fifth of a second."""

    def __init__(self, db: peewee.Database, user_id: int, terms: Sequence[Term]) -> None:
        self._db = db
        self._user_id = user_id
        self._terms = terms

    def sql(self) -> tuple[str, list[Any]]:
        q = self._quoted
        p = self._db.param
        head = (
            f"INSERT INTO {q(ArticleTag._meta.table_name)} "
            f"({q(ArticleTag.article.column_name)}, {q(ArticleTag.tag.column_name)}) "
        )
        # Only the models' own table and column names and placeholders go into the text: every value
        # (user id, slugs, tag paths) is a bound parameter.
        select = (
            f"SELECT a.{q(Article.id.column_name)}, t.{q(Tag.id.column_name)} "  # noqa: S608
            f"FROM {q(Article._meta.table_name)} AS a CROSS JOIN {q(Tag._meta.table_name)} AS t "
            f"WHERE a.{q(Article.user.column_name)} = {p} "
            f"AND a.{q(Article.slug.column_name)} IN ({{slugs}}) "
            f"AND t.{q(Tag.user.column_name)} = {p} "
            f"AND t.{q(Tag.path.column_name)} IN ({{tags}})"
        )
        parts = []
        params: list[Any] = []
        for tags, slugs in self._terms:
            parts.append(select.format(slugs=", ".join([p] * len(slugs)), tags=", ".join([p] * len(tags))))
            params += [self._user_id, *slugs, self._user_id, *tags]
        return head + " UNION ALL ".join(parts), params

    def _quoted(self, name: str) -> str:
        return self._db.quote[0] + name + self._db.quote[1]


def _pair_terms(by_tag_set: Mapping[tuple[str, ...], list[str]], max_keys: int) -> Iterator[Term]:
    """One term per tag set, split so that none holds more than ``max_keys`` keys (tags and slugs
    together): a tag set shared by more articles than that is split by its slugs, and one with more
    tags than that (a low parameter limit) by its tags too."""
    for tags, slugs in by_tag_set.items():
        tag_share = max(min(len(tags), max_keys // 2), 1)
        for tag_chunk in groups(tags, max_items=tag_share):
            for slug_chunk in groups(slugs, max_items=max(max_keys - len(tag_chunk), 1)):
                yield tag_chunk, slug_chunk


def _term_keys(term: Term) -> int:
    return len(term[0]) + len(term[1]) + 2  # and the user id, twice


def _term_bytes(term: Term) -> int:
    return sum(value_bytes(key) for keys in term for key in keys)
