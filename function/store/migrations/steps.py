"""The numbered migration steps, in order: the one list to extend when the schema changes.

A step is a function of a ``Migration`` (the database, Peewee's ``playhouse.migrate`` migrator for it, and
alterations that look before they alter). ``migrate`` runs each step a database has not recorded, in
order, and records it; a new database is created from the models at ``SCHEMA_VERSION`` without running
them. Adding a step (docs/development.md, "Add a migration step"): change the model, write a function
below that brings an existing database to it, append ``(next number, "what it does", function)``.

A step must be safe to run again after it stopped half-way: on MySQL/TiDB its DDL commits statement by
statement, before its version is recorded. Use the ``Migration`` methods (they check first), and write
data changes so that running them twice leaves what running them once does. Never edit a step that has
shipped: databases out there have recorded it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import peewee

from function.store.migrations.legacy import (
    ArticleBefore7,
    SearchDocumentBefore11,
    SearchTermBefore11,
    has_bodies_in_rows,
)
from function.store.models import (
    ArticleChunk,
    ArticleEmbedding,
    ArticleTag,
    Asset,
    AssetReference,
    Book,
    BookChapter,
    Delivery,
    FailedBook,
    FailedFile,
    HookAttempt,
    HookEndpoint,
    HookEvent,
    SearchDocument,
    SearchPosting,
    ServerKey,
    SweepState,
    Tag,
    User,
)
from function.store.write_plan import output_hash

if TYPE_CHECKING:
    # Only for the steps' annotations: the job's version check reads SCHEMA_VERSION from here without
    # loading playhouse.migrate.
    from function.store.migrations.operations import Migration

Step = tuple[int, str, Callable[["Migration"], None]]


def baseline(m: Migration) -> None:
    """A database made by a version before schema versions, brought to version 1: the tables it lacks,
    the nullable columns later versions added to existing tables (what ``init-db`` used to add), and
    any index it lacks."""
    tables = (
        User,
        Tag,
        ArticleBefore7,
        ArticleTag,
        FailedFile,
        Delivery,
        SweepState,
        HookEndpoint,
        HookEvent,
        HookAttempt,
        Asset,
        AssetReference,
        ServerKey,
        Book,
        BookChapter,
        FailedBook,
    )
    m.create_missing_tables(*tables)
    m.add_missing_columns(
        User.repository_id,
        Delivery.written,
        Delivery.unchanged,
        ArticleBefore7.emoji,
        ArticleBefore7.toc,
        Delivery.retryable,
        User.github_account_id,
        Book.cover_url,
    )
    m.add_missing_indexes(*tables)


# How a delivery record's error text marked a failure that may pass on a retry, before the record had a
# column for it. Only this step still knows it.
_OLD_RETRYABLE_MARK = "[retryable]"


def retryable_mark_to_column(m: Migration) -> None:
    """Deliveries whose error text carries the old ``[retryable]`` mark: ``retryable`` true, mark removed
    from the text (one UPDATE; a second run finds no mark)."""
    mark = _OLD_RETRYABLE_MARK
    text = peewee.fn.REPLACE(peewee.fn.REPLACE(Delivery.error, f" {mark}", ""), mark, "")
    (
        Delivery.update(retryable=True, error=peewee.fn.NULLIF(text, ""))
        .where(peewee.fn.INSTR(Delivery.error, mark) > 0)
        .bind(m.db)
        .execute()
    )


def render_fingerprints(m: Migration) -> None:
    """Articles, chapters and books: what their HTML was rendered with (``render_fingerprint``: NULL on
    the rows already there, so the next sync of each blog renders every file again, once), and a hash of
    that HTML (``output_hash``, computed here from the stored HTML, so that first pass moves an
    article's ``updatedAt`` only where its HTML changed). Running it again hashes only what is left."""
    m.add_missing_columns(
        ArticleBefore7.render_fingerprint,
        ArticleBefore7.output_hash,
        Book.render_fingerprint,
        BookChapter.render_fingerprint,
        BookChapter.output_hash,
    )
    for model in (ArticleBefore7, BookChapter):
        if has_bodies_in_rows(m.db, model):
            _hash_stored_html(m.db, model)


# Rows hashed per round: their HTML is held in memory meanwhile.
_HASHED_PER_ROUND = 200


def _hash_stored_html(db: peewee.Database, model: type[ArticleBefore7] | type[BookChapter]) -> None:
    """Fill ``output_hash`` where it is NULL from the row's own HTML and table of contents (a NULL table
    of contents is served as an empty one)."""
    while True:
        query = (
            model.select(model.id, model.content_html, model.toc)
            .where(model.output_hash.is_null())
            .order_by(model.id)
            .limit(_HASHED_PER_ROUND)
        )
        # Peewee's tuples() yields tuples; its types say models.
        rows = cast(list[tuple[int, str, str | None]], list(query.tuples().bind(db)))
        if not rows:
            return
        hashes = [(row_id, output_hash(html, toc or "[]")) for row_id, html, toc in rows]
        model.update(output_hash=peewee.Case(model.id, hashes)).where(
            model.id.in_([row_id for row_id, _ in hashes])
        ).bind(db).execute()


def user_source_binding(m: Migration) -> None:
    """users.source (what the user's first sync read: "github" or "dir:PATH") and
    users.removal_confirmed (the served articles a person agreed one sync may archive). Both start
    null: every existing user is bound by their next sync, and no removal is confirmed."""
    m.add_missing_columns(User.source, User.removal_confirmed)


def forget_book_failures(m: Migration) -> None:
    """Remembered book failures forgotten: a book is no longer broken by a chapter its config lists
    without a file (it is served with the chapters it has), so every book remembered as broken is read
    once more by the next sync, under today's rules. One DELETE; a second run finds nothing."""
    FailedBook.delete().bind(m.db).execute()


def image_references(m: Migration) -> None:
    """Articles, chapters and book covers: the asset URLs earlier versions wrote, as the stored
    references the renderer writes now (a URL only when served, from the ``ASSET_URL`` of that moment):
    ``stored_images``, in bounded rounds; running it again changes nothing more."""
    from function.store.migrations.stored_images import image_urls_to_references

    image_urls_to_references(m.db)


def article_bodies(m: Migration) -> None:
    """Articles: the Markdown, the HTML and the table of contents moved out of ``articles`` into
    ``article_bodies``, one row per article (``separate_bodies``: copied in rounds bounded by count and
    bytes, each committed on its own on MySQL/TiDB, then the three columns dropped). Running it again
    copies only what is left, and finds the columns gone."""
    from function.store.migrations.article_bodies import separate_bodies

    separate_bodies(m)


def last_sync_index_and_tags_per_user(m: Migration) -> None:
    """Deliveries: the index ``last_sync`` reads (a repository's deliveries, newest first), so finding a
    push's previous sync no longer scans every delivery. Tags: each user's own rows instead of rows
    every blog shared, whose locks made blogs with a tag in common wait for each other on TiDB
    (``user_tags``)."""
    from function.store.migrations.user_tags import tags_per_user

    m.add_missing_indexes(Delivery)
    tags_per_user(m)


def search_index(m: Migration) -> None:
    """The lexical search index's tables, as this step first made them (one row per article and term).
    Empty: step 11 replaces them with packed postings and builds the index from the stored articles."""
    m.create_missing_tables(SearchDocumentBefore11, SearchTermBefore11)


def article_vectors(m: Migration) -> None:
    """The semantic search's tables: each served article's chunks and vectors, and what they were
    computed from. Empty: with an embedding provider configured, the next sync of each blog fills them."""
    m.create_missing_tables(ArticleEmbedding, ArticleChunk)
    m.add_missing_indexes(ArticleEmbedding, ArticleChunk)


def packed_search_postings(m: Migration) -> None:
    """The lexical index in packed postings: ``search_terms`` (a row per article and term) dropped,
    ``search_documents`` made again with each article's number and terms, ``search_postings`` (a row
    per term and block of articles) created, and every live article indexed from its stored text
    (``search_index``: it empties the index first, so a second run builds the same one)."""
    from function.store.migrations.search_index import build_search_index

    m.drop_present_tables(SearchTermBefore11)
    if "search_documents" in m.db.get_tables() and "doc" not in m.column_names("search_documents"):
        m.drop_present_tables(SearchDocumentBefore11)
    m.create_missing_tables(SearchDocument, SearchPosting)
    m.add_missing_indexes(SearchDocument)
    build_search_index(m.db, m.commit_round)


STEPS: tuple[Step, ...] = (
    (1, "baseline: the tables, columns and indexes of earlier versions", baseline),
    (2, "deliveries: the error text's retryable mark into the retryable column", retryable_mark_to_column),
    (3, "articles, chapters and books: what their HTML was rendered with", render_fingerprints),
    (4, "users: the source each is bound to, and a confirmed mass removal", user_source_binding),
    (
        5,
        "books: those remembered as broken read again (a missing chapter no longer breaks one)",
        forget_book_failures,
    ),
    (6, "articles, chapters and book covers: image URLs as stored references", image_references),
    (7, "articles: Markdown, HTML and table of contents apart, in article_bodies", article_bodies),
    (
        8,
        "deliveries: an index for a repository's last sync; tags: each user's own rows",
        last_sync_index_and_tags_per_user,
    ),
    (9, "articles: the lexical search index built from their stored text", search_index),
    (10, "articles' chunks and vectors for semantic search", article_vectors),
    (11, "articles: the lexical search index in packed postings, built again", packed_search_postings),
)

# The schema version this code reads and writes: the last step's number.
SCHEMA_VERSION = STEPS[-1][0]
