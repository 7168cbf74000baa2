"""Writing the lexical search index: the terms of the articles a sync writes, in its transaction.

Only the articles a write touches touch the index: each article given to ``apply`` (new, changed, or
read again by ``sync --rebuild``) has its rows replaced, each archived one has them removed, and a push
that changes nothing writes nothing here. The rows are made from the article as the sync parsed it
(its Markdown body, never its HTML), so the index never reads the articles back.

The INSERT statements are written here rather than by Peewee: an article has hundreds to thousands of
terms, and Peewee renders each value of a multi-row INSERT in Python (microseconds each), which would
make the index the slowest part of a first sync.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import peewee

from function.articles.parsed import ParsedArticle
from function.search.lexical import INDEX_VERSION, IndexedDocument, indexed_document
from function.store.batching import KEY_CHUNK_SIZE, StatementQueue
from function.store.bounds import STATEMENT_MAX_BYTES, groups, limits_of
from function.store.models import SearchDocument, SearchTerm

# Bytes of values per INSERT of terms: a few hundred KB, like the other small-row INSERTs.
_TERM_INSERT_BYTES = min(STATEMENT_MAX_BYTES, 512 * 1024)

_TermRow = tuple[int, str, str, int, int]  # user id, slug, term, frequency, length
_TERM_COLUMNS = (SearchTerm.user, SearchTerm.slug, SearchTerm.term, SearchTerm.frequency, SearchTerm.length)


@dataclass(frozen=True)
class IndexedArticle:
    """What the index stores of one article."""

    slug: str
    content_hash: str
    document: IndexedDocument


def indexed_article(article: ParsedArticle) -> IndexedArticle:
    """The index's rows of a parsed article: its title, tags, description and Markdown body."""
    document = indexed_document(article.title, article.tags, article.description, article.content)
    return IndexedArticle(article.slug, article.content_hash, document)


def queue_index_writes(
    db: peewee.Database,
    tx: StatementQueue,
    user_id: int,
    written: Sequence[IndexedArticle],
    removed_slugs: Sequence[str],
) -> None:
    """Queue on ``tx`` the statements that make the index hold exactly ``written`` for their slugs, and
    nothing for ``removed_slugs``. Nothing given: no statement."""
    slugs = sorted({a.slug for a in written} | set(removed_slugs))
    if not slugs:
        return
    keys = min(limits_of(db).keys(reserved=1), KEY_CHUNK_SIZE)
    for chunk in groups(slugs, max_items=keys):
        for model in (SearchTerm, SearchDocument):
            tx.add(
                model.delete().where(model.user == user_id, model.slug.in_(chunk)).bind(db),
                "removing search terms",
            )
    if not written:
        return
    documents = [
        {
            "user": user_id,
            "slug": a.slug,
            "length": a.document.length,
            "content_hash": a.content_hash,
            "version": INDEX_VERSION,
        }
        for a in written
    ]
    for rows in groups(documents, max_items=min(limits_of(db).rows(5), KEY_CHUNK_SIZE)):
        tx.add(SearchDocument.insert_many(rows).bind(db), "writing search terms")
    for statement in term_inserts(db, _term_rows(user_id, written)):
        tx.add(statement, "writing search terms")


def _term_rows(user_id: int, written: Sequence[IndexedArticle]) -> list[_TermRow]:
    return [
        (user_id, a.slug, term, frequency, a.document.length)
        for a in written
        for term, frequency in a.document.frequencies.items()
    ]


def _row_bytes(row: _TermRow) -> int:
    return len(row[1]) + len(row[2].encode()) + 40


def term_inserts(db: peewee.Database, rows: Sequence[_TermRow]) -> Iterator[TermInsert]:
    """Multi-row INSERTs of ``rows``, each within the database's parameter and byte limits."""
    per_statement = min(limits_of(db).rows(5), 20_000)
    for chunk in groups(rows, max_items=per_statement, weights=[(_row_bytes, _TERM_INSERT_BYTES)]):
        yield TermInsert(db, chunk)


class TermInsert:
    """``INSERT INTO search_terms (...) VALUES (?, ?, ?, ?, ?), ...``: only the model's own table and
    column names and placeholders are in the text; every value is a bound parameter."""

    def __init__(self, db: peewee.Database, rows: Sequence[_TermRow]) -> None:
        self._db = db
        self._rows = rows

    def sql(self) -> tuple[str, list[Any]]:
        q = self._quoted
        p = self._db.param
        columns = ", ".join(q(c.column_name) for c in _TERM_COLUMNS)
        head = f"INSERT INTO {q(SearchTerm._meta.table_name)} ({columns}) VALUES "  # noqa: S608
        one = f"({p}, {p}, {p}, {p}, {p})"
        params: list[Any] = [value for row in self._rows for value in row]
        return head + ", ".join([one] * len(self._rows)), params

    def _quoted(self, name: str) -> str:
        return self._db.quote[0] + name + self._db.quote[1]
