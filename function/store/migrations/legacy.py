"""Tables as the migration steps before a change knew them: the steps that shipped keep reading and
writing the columns they were written for, whatever the models say today.

``SearchDocumentBefore11`` and ``SearchTermBefore11``: the lexical index as step 9 made it, before
step 11 packed its postings; step 9 creates them (empty) and step 11 replaces them.

``ArticleBefore7``: ``articles`` up to step 7, which moved the Markdown, the HTML and the table of
contents into ``article_bodies`` (``function.store.models.ArticleBody``). Steps 1 to 6 create, alter
and rewrite that shape; step 7 copies its body columns out and drops them.
"""

from __future__ import annotations

import peewee

from function.store.columns import (
    BaseModel,
    LongTextField,
    StringField,
    TextKeyField,
    UtcDateTimeField,
    Utf8TextField,
)
from function.store.models import User

# The columns step 7 moved out of ``articles``.
ARTICLE_BODY_COLUMNS = ("content", "content_html", "toc")


def has_bodies_in_rows(db: peewee.Database, model: type[BaseModel]) -> bool:
    """Whether ``model``'s table still holds its HTML in its rows. False for ``articles`` once step 7
    moved it out: a database that lost its version record (and runs every step again) may be past it,
    and the earlier steps then leave the articles to step 7, which finds them done."""
    return "content_html" in {column.name for column in db.get_columns(model._meta.table_name)}


class ArticleBefore7(BaseModel):
    id = peewee.AutoField()
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    path = TextKeyField(max_length=1024)
    blob_sha = StringField(max_length=64)
    title = Utf8TextField()
    type = TextKeyField(max_length=100, null=True)
    description = Utf8TextField(null=True)
    thumbnail = Utf8TextField(null=True)
    emoji = StringField(max_length=64, null=True)
    content = LongTextField()
    content_html = LongTextField()
    toc = LongTextField(null=True)
    content_hash = StringField(max_length=64)
    tags_hash = StringField(max_length=64, default="")
    render_fingerprint = StringField(max_length=32, null=True)
    output_hash = StringField(max_length=64, null=True)
    publish = peewee.BooleanField(default=False)
    archived = peewee.BooleanField(default=False)
    published_at = UtcDateTimeField(null=True)
    archived_at = UtcDateTimeField(null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        table_name = "articles"
        indexes = (
            (("user", "slug"), True),
            (("user", "publish", "archived", "published_at"), False),
        )


class SearchDocumentBefore11(BaseModel):
    """``search_documents`` as step 9 made it: one row per indexed article, before step 11 numbered
    the articles and kept their terms beside them."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    length = peewee.IntegerField()
    content_hash = StringField(max_length=64)
    version = peewee.IntegerField()

    class Meta:
        table_name = "search_documents"
        primary_key = peewee.CompositeKey("user", "slug")


class SearchTermBefore11(BaseModel):
    """``search_terms`` as step 9 made it: one row per (article, term), which step 11 replaced with
    packed postings (``search_postings``)."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    term = TextKeyField(max_length=64)
    frequency = peewee.IntegerField()
    length = peewee.IntegerField()

    class Meta:
        table_name = "search_terms"
        primary_key = peewee.CompositeKey("user", "term", "slug")
        indexes = ((("slug", "user"), False),)
