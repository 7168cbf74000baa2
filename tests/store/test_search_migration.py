"""Step 11 on a database an earlier version made, on SQLite and MariaDB: the index of one row per
article and term (step 9's) replaced in place by packed postings built from the stored articles,
which the search then answers from."""

from __future__ import annotations

from typing import cast

import peewee

from function.search.lexical import MAX_QUERY_TERMS, indexed_document
from function.search.postings import decode
from function.search.tokens import query_terms
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.legacy import SearchDocumentBefore11, SearchTermBefore11
from function.store.migrations.runner import migrate
from function.store.migrations.steps import STEPS
from function.store.migrations.version import read_version
from function.store.models import Article, ArticleBody, ArticleTag, SearchDocument, SearchPosting, Tag
from tests.kit.old_databases import make_old_database
from tests.store.test_migrations import assert_schema_of_a_new_database

_BEFORE_PACKED = next(i for i, (number, _, _) in enumerate(STEPS) if number == 11)


def _stored_entries(db: peewee.Database) -> set[tuple[str, str, int, int]]:
    """What the index must hold: the weighted terms of every live article, from its stored text."""
    tags: dict[int, list[str]] = {}
    pairs = ArticleTag.select(ArticleTag.article, Tag.path).join(Tag).tuples().bind(db)
    for article_id, path in cast(list[tuple[int, str]], list(pairs)):
        tags.setdefault(article_id, []).append(path)
    query = (
        Article.select(Article.id, Article.slug, Article.title, Article.description, ArticleBody.content)
        .join(ArticleBody, on=(ArticleBody.article == Article.id))
        .where(~Article.archived)
    )
    found = set()
    rows = cast(list[tuple[int, str, str, str | None, str]], list(query.tuples().bind(db)))
    for article_id, slug, title, description, content in rows:
        document = indexed_document(title, tags.get(article_id, []), description, content)
        found |= {(slug, term, f, document.length) for term, f in document.frequencies.items()}
    return found


def _entries(db: peewee.Database) -> set[tuple[str, str, int, int]]:
    slugs = {row.doc: row.slug for row in SearchDocument.select().bind(db)}
    return {
        (slugs[int(r["doc"])], row.term, int(r["frequency"]), int(r["length"]))
        for row in SearchPosting.select().bind(db)
        for r in decode(bytes(row.postings))
    }


def test_an_index_of_rows_per_term_becomes_packed_postings_in_place(db_url: str, second_db_url: str) -> None:
    # GIVEN a database at step 10, its index in step 9's shape holding a row the articles do not have
    db = open_database(db_url)
    make_old_database(db)
    with connection(db):
        migrate(db, list(STEPS[:_BEFORE_PACKED]))
        assert read_version(db) == 10
        assert "doc" not in {c.name for c in db.get_columns("search_documents")}
        SearchDocumentBefore11.insert(user=1, slug="autumn-walk", length=3, content_hash="x", version=1).bind(
            db
        ).execute()
        SearchTermBefore11.insert(user=1, slug="autumn-walk", term="stale", frequency=1, length=3).bind(
            db
        ).execute()

        # WHEN it is migrated
        report = migrate(db)

        # THEN step 11 alone ran: the old table is gone, the schema is a new database's, and the index
        # holds exactly the live articles' terms, current
        assert [number for number, _ in report.applied] == [11]
        assert "search_terms" not in db.get_tables()
        assert_schema_of_a_new_database(db, second_db_url)
        assert _entries(db) == _stored_entries(db)
        store = PeeweeStore(db)
        user = store.users.get_user("alice")
        assert user is not None
        status = store.search.index_status(user.id)
        assert status.articles == status.indexed == status.current > 0

        # AND the search answers from it: each published article's title finds it first
        served = store.reads.published_articles("alice")
        assert served
        for article in served:
            page = store.search.lexical_page(
                "alice", query_terms(article.title, limit=MAX_QUERY_TERMS), limit=5, offset=0
            )
            assert page is not None and page.hits[0][0].slug == article.slug
        stale = store.search.lexical_page("alice", ["stale"], limit=5, offset=0)
        assert stale is not None and stale.hits == [] and stale.total == 0
    db.close()
