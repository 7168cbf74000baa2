"""The data of migration step 7: each article's Markdown, HTML and table of contents copied from its
``articles`` row into its own ``article_bodies`` row, then the three columns dropped from ``articles``.

Rounds go by id, at most ``per_round`` articles and ``round_bytes`` of body text each (a body larger
than that goes alone): the sizes are read first (``LENGTH``, computed by the server; the text is not
sent), then one ``INSERT … SELECT`` copies the round inside the server. On MySQL/TiDB each round is
committed on its own, so no transaction nears TiDB's size limit, however large the blog. A step stopped
half-way resumes after the highest id copied (rounds are whole and in id order); one stopped after the
columns were dropped finds nothing to copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import peewee

from function.store.migrations.legacy import ARTICLE_BODY_COLUMNS, ArticleBefore7
from function.store.models import Article, ArticleBody

if TYPE_CHECKING:
    from function.store.migrations.operations import Migration

# Articles per round, and bytes of body text per round: a round is one INSERT … SELECT and one commit.
# 16 MiB keeps a round's transaction far below TiDB's 100 MiB limit (TiDB counts a row's bytes several
# times over while it commits) and a MariaDB stand-in's undo log small.
COPIED_PER_ROUND = 500
ROUND_MAX_BYTES = 16 * 1024 * 1024


def separate_bodies(
    m: Migration, *, per_round: int = COPIED_PER_ROUND, round_bytes: int = ROUND_MAX_BYTES
) -> int:
    """Create ``article_bodies``, copy every article's body into it, drop the columns; then the read
    routes' index with the slug at its end (the lists' order, ties included). The rows copied."""
    m.create_missing_tables(ArticleBody)
    copied = 0
    if "content" in m.column_names("articles"):
        copied = _copy_bodies(m, per_round, round_bytes)
    m.drop_present_columns("articles", *ARTICLE_BODY_COLUMNS)
    m.add_missing_indexes(Article)
    m.drop_index_on("articles", ("user_id", "publish", "archived", "published_at"))
    return copied


def _copy_bodies(m: Migration, per_round: int, round_bytes: int) -> int:
    db, old = m.db, ArticleBefore7
    last = ArticleBody.select(peewee.fn.MAX(ArticleBody.article)).bind(db).scalar() or 0
    size = (
        peewee.fn.LENGTH(old.content)
        + peewee.fn.LENGTH(old.content_html)
        + peewee.fn.COALESCE(peewee.fn.LENGTH(old.toc), 0)
    )
    copied = 0
    while True:
        query = old.select(old.id, size).where(old.id > last).order_by(old.id).limit(per_round)
        # Peewee's tuples() yields tuples; its types say models.
        sizes = cast(list[tuple[int, int]], list(query.tuples().bind(db)))
        if not sizes:
            return copied
        upto, total, count = sizes[0][0], 0, 0
        for row_id, length in sizes:
            if count and total + int(length or 0) > round_bytes:
                break
            upto, total, count = row_id, total + int(length or 0), count + 1
        rows = old.select(old.id, old.content, old.content_html, old.toc).where(old.id > last, old.id <= upto)
        fields = [ArticleBody.article, ArticleBody.content, ArticleBody.content_html, ArticleBody.toc]
        ArticleBody.insert_from(rows, fields).bind(db).execute()
        copied, last = copied + count, upto
        m.commit_round()
