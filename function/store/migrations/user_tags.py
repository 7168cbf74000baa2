"""Migration step 8's part for the tags: the tags every blog shared become each user's own rows.

Before, ``tags`` held one row per path for all users, and ``article_tags`` pointed at it. On TiDB a sync
that wrote an article's tags locked that shared row: the foreign-key check of ``article_tags`` locks the
parent row as ``SELECT … FOR UPDATE`` does (TiDB has no shared lock for it), and ``INSERT IGNORE`` of a
path that exists locks its unique key (``tidb_lock_unchanged_keys``). Two blogs with a tag in common
waited for each other. Now a tag row belongs to one user (``tags.user_id``, unique with the path), so a
sync only ever locks its own user's rows. (Dropping the foreign key alone would leave the ``INSERT
IGNORE`` lock on the shared unique key, and a pre-read to avoid it costs a round trip the write path
does not make.)

In place, each part checking first so that a run stopped half-way finishes when run again:

1. ``tags.user_id`` added, nullable (SQLite cannot add a NOT NULL column to a table other tables
   reference without rebuilding it, and a rebuild's DROP would cascade into ``article_tags``);
2. the unique index on ``path`` alone replaced by the one on (``user_id``, ``path``), then, on MySQL and
   TiDB, the foreign key to ``users`` (after the index, which it uses, so no index of its own is made);
3. one row per (user, path) the user's articles use, copied from the shared rows (``INSERT IGNORE``);
4. each ``article_tags`` pair pointed at its user's row (one UPDATE of the pairs still on a shared row);
5. the shared rows deleted: no pair points at them any more (the unused ones go too).

Steps 3 to 5 write about 100 bytes per tag pair: a database of a few blogs stays far below TiDB's
transaction limit (a million pairs would not).
"""

from __future__ import annotations

import peewee
from playhouse.migrate import migrate

from function.store.backends import is_mysql
from function.store.migrations.operations import Migration
from function.store.models import Article, ArticleTag, Tag


def tags_per_user(m: Migration) -> None:
    """Give every user their own tag rows (the module's steps 1 to 5)."""
    db = m.db
    table = Tag._meta.table_name
    if Tag.user.column_name not in m.column_names(table):
        # alter_add_column, not add_column: on MySQL the latter adds the foreign key at once, and InnoDB
        # would then make an index of its own for it, which a new database does not have.
        migrate(m.migrator.alter_add_column(table, Tag.user.column_name, Tag.user))
    for index in db.get_indexes(table):
        if tuple(index.columns) == (Tag.path.column_name,) and index.unique:
            migrate(m.migrator.drop_index(table, index.name))
    m.add_missing_indexes(Tag)
    if is_mysql(db) and not any(fk.column == Tag.user.column_name for fk in db.get_foreign_keys(table)):
        user = Tag.user
        migrate(
            m.migrator.add_foreign_key_constraint(
                table,
                user.column_name,
                user.rel_model._meta.table_name,
                user.rel_field.column_name,
                on_delete=user.on_delete,
            )
        )
    _copy_shared_tags(db)


def _copy_shared_tags(db: peewee.Database) -> None:
    """Parts 3 to 5: the users' own rows, the pairs pointed at them, the shared rows gone."""
    shared = Tag.alias("shared")
    own = Tag.alias("own")
    used = (
        ArticleTag.select(Article.user, shared.path)
        .join(Article, on=(Article.id == ArticleTag.article))
        .join(shared, on=(shared.id == ArticleTag.tag))
        .where(shared.user.is_null())
        .distinct()
    )
    Tag.insert_from(used, [Tag.user, Tag.path]).on_conflict_ignore().bind(db).execute()

    # The user's row of the same path as the shared row the pair points at.
    their_row = (
        own.select(own.id)
        .join(shared, on=(shared.path == own.path))
        .join(Article, on=(Article.user == own.user))
        .where((shared.id == ArticleTag.tag) & (Article.id == ArticleTag.article))
    )
    still_shared = Tag.select(Tag.id).where(Tag.user.is_null())
    ArticleTag.update(tag=their_row).where(ArticleTag.tag.in_(still_shared)).bind(db).execute()
    Tag.delete().where(Tag.user.is_null()).bind(db).execute()
