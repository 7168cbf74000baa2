"""Step 11's work: the lexical search index built for the articles a database already holds.

The sync keeps the index from what it parsed; an existing database has articles the sync will not
write again until they change, so this step indexes each user's live (not archived) articles from
their stored title, tags, description and Markdown, in bounded rounds (each committed on its own on
MySQL/TiDB when the step passes ``commit_round``). It starts by removing every indexed row, so running
it again leaves what running it once does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import peewee

from function.search.lexical import indexed_document
from function.store.batching import StatementQueue
from function.store.models import Article, ArticleBody, ArticleTag, SearchDocument, SearchPosting, Tag
from function.store.search_index import IndexedArticle, queue_index_writes

# Articles read per round: their Markdown is held in memory meanwhile.
_ARTICLES_PER_ROUND = 200


def build_search_index(db: peewee.Database, commit_round: Callable[[], None] | None = None) -> int:
    """Index every live article of every user from the table; how many were indexed. ``commit_round``
    runs after each round (the migration's, which commits it on MySQL/TiDB)."""
    SearchPosting.delete().bind(db).execute()
    SearchDocument.delete().bind(db).execute()
    indexed = 0
    last_id = 0
    while True:
        query = (
            Article.select(
                Article.id,
                Article.user,
                Article.slug,
                Article.title,
                Article.description,
                ArticleBody.content,
                Article.content_hash,
            )
            .join(ArticleBody, on=(ArticleBody.article == Article.id))
            .where(~Article.archived, Article.id > last_id)
            .order_by(Article.id)
            .limit(_ARTICLES_PER_ROUND)
        )
        rows = cast(list[tuple[Any, ...]], list(query.tuples().bind(db)))
        if not rows:
            return indexed
        last_id = rows[-1][0]
        tags = _tags_of(db, [row[0] for row in rows])
        by_user: dict[int, list[IndexedArticle]] = {}
        for row_id, user_id, slug, title, description, content, content_hash in rows:
            document = indexed_document(title, tags.get(row_id, []), description, content)
            by_user.setdefault(user_id, []).append(IndexedArticle(slug, content_hash, document))
        tx = StatementQueue(db)  # the step's own transaction holds these statements
        for user_id, articles in by_user.items():
            queue_index_writes(db, tx, user_id, articles, [])
        tx.flush()
        indexed += len(rows)
        if commit_round is not None:
            commit_round()


def _tags_of(db: peewee.Database, article_ids: list[int]) -> dict[int, list[str]]:
    query = (
        ArticleTag.select(ArticleTag.article, Tag.path)
        .join(Tag, on=(ArticleTag.tag == Tag.id))
        .where(ArticleTag.article.in_(article_ids))
    )
    found: dict[int, list[str]] = {}
    # Peewee's tuples() yields tuples; its types say models.
    pairs = cast(list[tuple[int, str]], list(query.tuples().bind(db)))
    for article_id, path in pairs:
        found.setdefault(article_id, []).append(path)
    return found
