"""The lexical index's packed postings as the sync keeps them, on SQLite and MariaDB: articles numbered
across more than one block, edits that drop terms, removals, and far fewer rows than entries."""

from __future__ import annotations

import pytest

from function.articles.parsed import ParsedArticle
from function.search.lexical import MAX_QUERY_TERMS, indexed_document
from function.search.postings import BLOCK_DOCS, decode
from function.search.tokens import query_terms
from function.store.facade import PeeweeStore
from function.store.models import SearchDocument, SearchPosting
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.statements import count_statements

# Words every article shares, and one of its own: a blog's common vocabulary and its distinct terms.
_SHARED = " ".join(f"shared{k}" for k in range(40))
COUNT = BLOCK_DOCS + 6  # two blocks


def numbered(i: int, body: str | None = None) -> ParsedArticle:
    return article(f"a{i:03d}", body=body if body is not None else f"{_SHARED} only{i}")


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101)


@pytest.fixture
def blog(store: PeeweeStore, user: UserRecord) -> dict[str, ParsedArticle]:
    articles = {a.slug: a for a in (numbered(i) for i in range(COUNT))}
    apply_as_worker(store, user.id, list(articles.values()), [], T0)
    return articles


def docs(store: PeeweeStore, user_id: int) -> dict[str, int]:
    rows = SearchDocument.select(SearchDocument.slug, SearchDocument.doc).where(
        SearchDocument.user == user_id
    )
    return {row.slug: row.doc for row in rows.bind(store.db)}


def entries(store: PeeweeStore, user_id: int) -> set[tuple[str, str, int, int]]:
    slugs = {doc: slug for slug, doc in docs(store, user_id).items()}
    found = set()
    for row in SearchPosting.select().where(SearchPosting.user == user_id).bind(store.db):
        records = decode(bytes(row.postings))
        assert len(records) > 0  # no row is left without entries
        assert all(records["doc"][1:] > records["doc"][:-1]), (row.term, row.block)  # sorted, once each
        for record in records:
            doc = int(record["doc"])
            assert doc // BLOCK_DOCS == row.block
            found.add((slugs[doc], row.term, int(record["frequency"]), int(record["length"])))
    return found


def expected(articles: dict[str, ParsedArticle]) -> set[tuple[str, str, int, int]]:
    """The entries the index must hold for these articles: each one's weighted terms, nothing else."""
    found = set()
    for a in articles.values():
        document = indexed_document(a.title, a.tags, a.description, a.content)
        found |= {(a.slug, term, f, document.length) for term, f in document.frequencies.items()}
    return found


def blocks_of(store: PeeweeStore, user_id: int, term: str) -> list[int]:
    query = SearchPosting.select(SearchPosting.block).where(
        SearchPosting.user == user_id, SearchPosting.term == term
    )
    return sorted(row.block for row in query.bind(store.db))


def slugs_found(store: PeeweeStore, query: str, limit: int = 100) -> tuple[list[str], int]:
    page = store.search.lexical_page(
        "alice", query_terms(query, limit=MAX_QUERY_TERMS), limit=limit, offset=0
    )
    assert page is not None
    return [view.slug for view, _ in page.hits], page.total


def test_articles_are_numbered_in_two_blocks_and_found_in_both(
    store: PeeweeStore, user: UserRecord, blog: dict[str, ParsedArticle]
) -> None:
    numbers = docs(store, user.id)
    assert sorted(numbers.values()) == list(range(COUNT))
    assert blocks_of(store, user.id, "shared7") == [0, 1]
    assert blocks_of(store, user.id, f"only{COUNT - 1}") == [1]
    assert entries(store, user.id) == expected(blog)

    found, total = slugs_found(store, "shared7", limit=100)
    assert total == COUNT and len(found) == 100
    # Equal scores (same length, same frequency): newest first, then by slug descending, across blocks.
    assert found == sorted(found, reverse=True)
    last, _ = slugs_found(store, f"only{COUNT - 1}")
    assert last == [f"a{COUNT - 1:03d}"]


def test_far_fewer_rows_than_entries(
    store: PeeweeStore, user: UserRecord, blog: dict[str, ParsedArticle]
) -> None:
    rows = SearchPosting.select().where(SearchPosting.user == user.id).bind(store.db).count()
    held = len(entries(store, user.id))
    assert held > 40 * COUNT
    assert rows * 10 < held  # one row per term and block, not per term and article


def test_an_edit_that_drops_terms_removes_their_entries_and_keeps_its_number(
    store: PeeweeStore, user: UserRecord, blog: dict[str, ParsedArticle]
) -> None:
    before = docs(store, user.id)
    edited = numbered(3, body="shared1 fresh")
    blog[edited.slug] = edited
    apply_as_worker(store, user.id, [edited], [], at(60))

    assert docs(store, user.id) == before
    assert entries(store, user.id) == expected(blog)
    assert "a003" not in slugs_found(store, "shared7")[0]
    assert slugs_found(store, "fresh")[0] == ["a003"]
    assert slugs_found(store, "only3") == ([], 0)
    assert blocks_of(store, user.id, "only3") == []  # its only article dropped it: the row is gone


def test_removals_empty_a_block_and_new_articles_take_the_next_numbers(
    store: PeeweeStore, user: UserRecord, blog: dict[str, ParsedArticle]
) -> None:
    second_block = [f"a{i:03d}" for i in range(BLOCK_DOCS, COUNT)]
    apply_as_worker(store, user.id, [], [*second_block, "a000"], at(60))
    for slug in [*second_block, "a000"]:
        del blog[slug]

    assert entries(store, user.id) == expected(blog)
    assert blocks_of(store, user.id, "shared7") == [0]
    assert slugs_found(store, "shared7")[1] == BLOCK_DOCS - 1
    assert "a000" not in docs(store, user.id)

    # A new slug takes the number after the highest left; a removed one comes back with a new number.
    added = [numbered(900), numbered(0)]
    apply_as_worker(store, user.id, added, [], at(120))
    blog.update((a.slug, a) for a in added)
    numbers = docs(store, user.id)
    assert {numbers["a900"], numbers["a000"]} == {BLOCK_DOCS - 1 + 1, BLOCK_DOCS - 1 + 2}
    assert entries(store, user.id) == expected(blog)
    assert slugs_found(store, "only900")[0] == ["a900"]


def test_writes_that_add_articles_to_a_block_keep_every_entry_in_order(
    store: PeeweeStore, user: UserRecord
) -> None:
    # GIVEN a block filled by three writes: new articles, more new ones, then an edit of one of the first
    # that drops and adds terms in the same write as more new articles
    articles = {a.slug: a for a in (numbered(i) for i in range(10))}
    apply_as_worker(store, user.id, list(articles.values()), [], T0)
    more = {a.slug: a for a in (numbered(i) for i in range(10, 20))}
    apply_as_worker(store, user.id, list(more.values()), [], at(1))
    articles |= more
    edited = numbered(3, body="shared1 shared2 rewritten words")
    newest = {a.slug: a for a in (numbered(i) for i in range(20, 25))}
    apply_as_worker(store, user.id, [edited, *newest.values()], [], at(2))
    articles |= {edited.slug: edited} | newest

    # THEN the index holds exactly each article's entries, each row sorted by number
    assert entries(store, user.id) == expected(articles)
    assert docs(store, user.id)["a003"] == 3
    # AND a search finds the added, the edited and the untouched articles
    assert slugs_found(store, "only22")[0] == ["a022"]
    assert slugs_found(store, "rewritten")[0] == ["a003"]
    assert slugs_found(store, "only3")[1] == 0
    assert slugs_found(store, "shared1")[1] == 25


@pytest.mark.mysql
def test_on_mysql_adding_articles_reads_and_deletes_no_postings(mysql_store: PeeweeStore) -> None:
    # GIVEN a blog of two blocks on MariaDB
    store = mysql_store
    user = store.users.add_user("alice", "alice@example.com", 101)
    blog = {a.slug: a for a in (numbered(i) for i in range(COUNT))}
    apply_as_worker(store, user.id, list(blog.values()), [], T0)

    # WHEN a push adds two articles whose terms the blog's rows already hold
    added = [numbered(COUNT), numbered(COUNT + 1)]
    with count_statements(store.db) as seen:
        apply_as_worker(store, user.id, added, [], at(1))

    # THEN their entries were appended to those rows, unread and undeleted
    touching = [s for s in seen.statements if "search_postings" in s]
    assert touching and all(s.startswith("INSERT") for s in touching), touching
    assert entries(store, user.id) == expected(blog | {a.slug: a for a in added})
    assert slugs_found(store, "shared5")[1] == COUNT + 2
