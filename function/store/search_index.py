"""Writing the lexical search index: the terms of the articles a sync writes, in its transaction.

The index is two tables (``function.store.models``): ``search_documents``, a row per indexed article
with its number in the user's index (``doc``) and its distinct terms, and ``search_postings``, a row
per (term, block of ``BLOCK_DOCS`` numbers) whose value packs the entries of that block's articles
holding the term (``function.search.postings``).

Only the articles a write touches touch the index: each article given to ``apply`` (new, changed, or
read again by ``sync --rebuild``) has its entries replaced, each archived one has them removed, and a
push that changes nothing writes nothing here. The rows are made from the article as the sync parsed
it (its Markdown body, never its HTML), so the index never reads the articles back.

One write reads, inside the transaction: the documents rows of its slugs (their numbers and old terms)
with the user's highest number, then the postings rows of the (term, block) pairs whose entries change
(the old and new terms of each article, in its block); it rewrites those rows (DELETE, then INSERT of
the merged values) and the documents rows. On MySQL/TiDB the rows that only gain entries of articles
new to the index are not read: an INSERT appends the entries to them (a first sync reads no
postings). So its work is bounded by the changed articles' terms times ``BLOCK_DOCS``, never by the
blog's size, in a fixed number of statements per as many keys and bytes as a statement may carry.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from operator import or_
from typing import Any

import peewee

from function.articles.parsed import ParsedArticle
from function.search.lexical import INDEX_VERSION, IndexedDocument, indexed_document
from function.search.postings import Grouped, block_of, merged, records_of
from function.store.backends import is_mysql
from function.store.batching import KEY_CHUNK_SIZE, StatementQueue
from function.store.bounds import STATEMENT_MAX_BYTES, groups, limits_of, row_bytes
from function.store.models import SearchDocument, SearchPosting

# Bytes of values per INSERT of postings: a few hundred KB, like the other small-row INSERTs.
_POSTING_INSERT_BYTES = min(STATEMENT_MAX_BYTES, 512 * 1024)
# Blocks per statement that reads or deletes postings by (term, block): an OR of one condition per
# block, kept shallow (SQLite's expression depth is 1,000).
_BLOCKS_PER_STATEMENT = 100

_Pair = tuple[str, int]  # term, block
_PostingRow = tuple[int, str, int, bytes]  # user id, term, block, packed entries
_POSTING_COLUMNS = (SearchPosting.user, SearchPosting.term, SearchPosting.block, SearchPosting.postings)


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


def packed_terms(terms: Sequence[str]) -> bytes:
    """An article's distinct terms as its documents row keeps them: sorted, one a line, zlib."""
    return zlib.compress("\n".join(sorted(terms)).encode(), 6)


def unpacked_terms(value: bytes | memoryview | None) -> list[str]:
    """``packed_terms``'s terms again."""
    if not value:
        return []
    text = zlib.decompress(bytes(value)).decode()
    return text.split("\n") if text else []


@dataclass(frozen=True)
class _Stored:
    doc: int
    terms: list[str]


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
    stored, highest = _stored_documents(db, tx, user_id, slugs)
    # Entries to drop (the stored articles', all their old terms) and to add, by (term, block).
    drop: dict[_Pair, set[int]] = defaultdict(set)
    for old in stored.values():
        block = block_of(old.doc)
        for term in old.terms:
            drop[(term, block)].add(old.doc)
    add = Grouped()
    documents: list[dict[str, Any]] = []
    next_doc = highest + 1
    for article in written:
        if article.slug in stored:
            doc = stored[article.slug].doc
        else:
            doc, next_doc = next_doc, next_doc + 1
        block = block_of(doc)
        frequencies = article.document.frequencies
        add.add([(term, block) for term in frequencies], doc, frequencies.values(), article.document.length)
        documents.append(
            {
                "user": user_id,
                "slug": article.slug,
                "doc": doc,
                "length": article.document.length,
                "terms": packed_terms(list(frequencies)),
                "content_hash": article.content_hash,
                "version": INDEX_VERSION,
            }
        )
    added = add.records()
    # A pair that only gains entries of articles new to the index needs no read on MySQL/TiDB: their
    # numbers are above every stored one, so appending them to the row keeps it sorted (an INSERT
    # that appends on a duplicate key). Every other pair, and every pair on SQLite (no round trip to
    # save, and its || makes text of bytes), is read, merged here and written whole.
    rewritten = set(drop)
    for article in written:
        if article.slug in stored:
            block = block_of(stored[article.slug].doc)
            rewritten.update((term, block) for term in article.document.frequencies)
    appended = sorted(set(added) - rewritten) if is_mysql(db) else []
    pairs = sorted((set(drop) | set(added)) - set(appended))
    # Only blocks that held a number before this write can have rows.
    existing = _postings(db, tx, user_id, [p for p in pairs if highest >= 0 and p[1] <= block_of(highest)])
    rows: list[_PostingRow] = []
    nothing = records_of([], [], [])
    for pair in pairs:
        value = merged(existing.get(pair), drop.get(pair, ()), added.get(pair, nothing))
        if value:
            rows.append((user_id, pair[0], pair[1], value))
    appends = [(user_id, term, block, added[(term, block)].tobytes()) for term, block in appended]
    for condition in _pair_conditions(db, user_id, sorted(existing)):
        tx.add(SearchPosting.delete().where(condition).bind(db), "removing search postings")
    keys = min(limits_of(db).keys(reserved=1), KEY_CHUNK_SIZE)
    for chunk in groups(slugs, max_items=keys):
        tx.add(
            SearchDocument.delete()
            .where(SearchDocument.user == user_id, SearchDocument.slug.in_(chunk))
            .bind(db),
            "removing search documents",
        )
    limits = limits_of(db)
    for chunk_rows in groups(
        documents,
        max_items=min(limits.rows(7), KEY_CHUNK_SIZE),
        weights=[(row_bytes, limits.statement_bytes)],
    ):
        tx.add(SearchDocument.insert_many(chunk_rows).bind(db), "writing search documents")
    for statement in posting_inserts(db, rows):
        tx.add(statement, "writing search postings")
    for statement in posting_inserts(db, appends, append=True):
        tx.add(statement, "writing search postings")


def _stored_documents(
    db: peewee.Database, tx: StatementQueue, user_id: int, slugs: Sequence[str]
) -> tuple[dict[str, _Stored], int]:
    """The documents rows of ``slugs`` (number and terms), and the user's highest number (-1: none),
    read in one statement per as many slugs as a statement may hold."""
    stored: dict[str, _Stored] = {}
    highest = -1
    # Parameters besides the slugs: the user's id twice and the highest number's two empty columns.
    keys = min(limits_of(db).keys(reserved=4), KEY_CHUNK_SIZE)
    for i, chunk in enumerate(groups(slugs, max_items=keys)):
        query: Any = SearchDocument.select(
            SearchDocument.slug, SearchDocument.doc, SearchDocument.terms
        ).where(SearchDocument.user == user_id, SearchDocument.slug.in_(chunk))
        if i == 0:
            top = SearchDocument.select(
                peewee.Value(None), peewee.fn.MAX(SearchDocument.doc), peewee.Value(None)
            ).where(SearchDocument.user == user_id)
            query = query.union_all(top)
        for slug, doc, terms in tx.read(query.bind(db), "reading search documents"):
            if slug is None:
                highest = int(doc) if doc is not None else -1
            else:
                stored[_text(slug)] = _Stored(int(doc), unpacked_terms(terms))
    return stored, highest


def _postings(
    db: peewee.Database, tx: StatementQueue, user_id: int, pairs: Sequence[_Pair]
) -> dict[_Pair, bytes]:
    """The packed entries stored for each of ``pairs`` that has a row."""
    found: dict[_Pair, bytes] = {}
    for condition in _pair_conditions(db, user_id, pairs):
        query = SearchPosting.select(SearchPosting.term, SearchPosting.block, SearchPosting.postings).where(
            condition
        )
        for term, block, value in tx.read(query.bind(db), "reading search postings"):
            found[(_text(term), int(block))] = bytes(value)
    return found


def _pair_conditions(db: peewee.Database, user_id: int, pairs: Sequence[_Pair]) -> Iterator[Any]:
    """WHERE conditions selecting the rows of ``pairs`` (sorted by term, any order of blocks), each
    within a statement's keys and ``_BLOCKS_PER_STATEMENT`` blocks: ``user = ? AND (block = ? AND term
    IN (...) OR ...)``."""
    # Parameters: the user's id, then per block its number and its terms.
    budget = min(limits_of(db).keys(reserved=1), KEY_CHUNK_SIZE)
    by_block: dict[int, list[str]] = defaultdict(list)
    for term, block in pairs:
        by_block[block].append(term)
    pieces = [
        (block, chunk)
        for block in sorted(by_block)
        for chunk in groups(by_block[block], max_items=max(budget - 1, 1))
    ]
    statement: list[tuple[int, list[str]]] = []
    used = 0
    for block, chunk in pieces:
        cost = 1 + len(chunk)
        if statement and (used + cost > budget or len(statement) >= _BLOCKS_PER_STATEMENT):
            yield _condition(user_id, statement)
            statement, used = [], 0
        statement.append((block, chunk))
        used += cost
    if statement:
        yield _condition(user_id, statement)


def _condition(user_id: int, pieces: Sequence[tuple[int, list[str]]]) -> Any:
    either = reduce(
        or_, [(SearchPosting.block == block) & SearchPosting.term.in_(terms) for block, terms in pieces]
    )
    return (SearchPosting.user == user_id) & either


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)


def _posting_bytes(row: _PostingRow) -> int:
    return len(row[1].encode()) + 2 * len(row[3]) + 40


def posting_inserts(
    db: peewee.Database, rows: Sequence[_PostingRow], *, append: bool = False
) -> Iterator[PostingInsert]:
    """Multi-row INSERTs of ``rows``, each within the database's parameter and byte limits (``append``,
    MySQL/TiDB only: a row whose key exists gets the value appended to its own)."""
    per_statement = min(limits_of(db).rows(4), 20_000)
    for chunk in groups(rows, max_items=per_statement, weights=[(_posting_bytes, _POSTING_INSERT_BYTES)]):
        yield PostingInsert(db, chunk, append=append)


class PostingInsert:
    """``INSERT INTO search_postings (...) VALUES (?, ?, ?, ?), ...``: only the model's own table and
    column names and placeholders are in the text; every value is a bound parameter. Written here
    rather than by Peewee, which renders each value of a multi-row INSERT in Python (microseconds each):
    a first sync writes tens of thousands of these rows."""

    def __init__(self, db: peewee.Database, rows: Sequence[_PostingRow], *, append: bool = False) -> None:
        self._db = db
        self._rows = rows
        self._append = append

    def sql(self) -> tuple[str, list[Any]]:
        q = self._quoted
        p = self._db.param
        columns = ", ".join(q(c.column_name) for c in _POSTING_COLUMNS)
        head = f"INSERT INTO {q(SearchPosting._meta.table_name)} ({columns}) VALUES "  # noqa: S608
        one = f"({p}, {p}, {p}, {p})"
        params: list[Any] = [value for row in self._rows for value in row]
        sql = head + ", ".join([one] * len(self._rows))
        if self._append:
            postings = q(SearchPosting.postings.column_name)
            sql += f" ON DUPLICATE KEY UPDATE {postings} = CONCAT({postings}, VALUES({postings}))"
        return sql, params

    def _quoted(self, name: str) -> str:
        return self._db.quote[0] + name + self._db.quote[1]
