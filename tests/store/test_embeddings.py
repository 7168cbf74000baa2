"""Semantic search's part of the store, on SQLite and MariaDB: which articles are due for vectors, the
write that replaces an article's chunks (and refuses a text that changed meanwhile), vectors read back
exactly, the missing count, and the migration step that adds the tables."""

from __future__ import annotations

import numpy as np
import peewee
import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.embeddings import ChunkRow, EmbeddingQueries, pack, unpack
from function.store.facade import PeeweeStore
from function.store.migrations.runner import migrate
from function.store.migrations.steps import STEPS
from function.store.models import ArticleChunk, ArticleEmbedding
from function.store.records import UserRecord
from function.store.schema import schema_differences
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.old_databases import make_old_database

MODEL = "test:model"
CHUNKING = "local-1:512:64"


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


@pytest.fixture
def queries(store: PeeweeStore) -> EmbeddingQueries:
    return EmbeddingQueries(store.session)


def ids_of(store: PeeweeStore, user_id: int) -> dict[str, int]:
    return {slug: stored.id for slug, stored in store.reconcile.load_index(user_id).items()}


def rows(*vectors: list[float]) -> list[ChunkRow]:
    return [
        ChunkRow(i, f"h{i}", f"text {i}", 3, np.array(v, dtype=np.float32)) for i, v in enumerate(vectors)
    ]


def save(
    queries: EmbeddingQueries, store: PeeweeStore, user_id: int, slug: str, *vectors: list[float]
) -> bool:
    stored = store.reconcile.load_index(user_id)[slug]
    return queries.save(
        stored.id,
        stored.content_hash,
        "text-hash-" + slug,
        chunking=CHUNKING,
        model=MODEL,
        chunks=rows(*vectors),
        now=T0,
    )


def test_served_articles_without_vectors_are_due_drafts_and_archived_are_not(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b"), article("draft", publish=False)], [], T0)
    apply_as_worker(store, user.id, [article("gone")], [], T0)
    apply_as_worker(store, user.id, [], ["gone"], at(1))
    ids = ids_of(store, user.id)

    due = queries.due(user.id, MODEL, CHUNKING, limit=10)

    assert [d.article_id for d in due] == [ids["a"], ids["b"]]
    assert due[0].stored_text_hash is None and due[0].stored_model is None


def test_stored_vectors_are_read_back_exactly_as_float32(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)
    first = [0.1, -2.5, 3.0e-8, 1.0]
    assert save(queries, store, user.id, "a", first, [1.0, 0.0, 0.0, 0.0])
    assert save(queries, store, user.id, "b", [0.0, 1.0, 0.0, 0.0])

    found = queries.vectors(user.id, MODEL)

    ids = ids_of(store, user.id)
    assert found.article_ids.tolist() == [ids["a"], ids["a"], ids["b"]]
    assert found.matrix.dtype == np.float32
    assert np.array_equal(found.matrix[0], np.array(first, dtype=np.float32))
    assert queries.due(user.id, MODEL, CHUNKING, limit=10) == []
    assert ArticleChunk.select().bind(store.db).count() == 3


def test_a_change_of_text_model_or_chunking_makes_an_article_due_again(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)
    save(queries, store, user.id, "a", [1.0, 0.0])
    save(queries, store, user.id, "b", [0.0, 1.0])
    ids = ids_of(store, user.id)

    assert [d.article_id for d in queries.due(user.id, "other:model", CHUNKING, limit=10)] == [
        ids["a"],
        ids["b"],
    ]
    assert len(queries.due(user.id, MODEL, "local-2:512:64", limit=10)) == 2
    assert queries.due(user.id, MODEL, None, limit=10) == []  # a chunking not known yet: not compared

    apply_as_worker(store, user.id, [article("b", body="Edited.")], [], at(1))
    due = queries.due(user.id, MODEL, CHUNKING, limit=10)
    assert [(d.article_id, d.stored_text_hash) for d in due] == [(ids["b"], "text-hash-b")]


def test_saving_again_replaces_the_chunks(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a")], [], T0)
    save(queries, store, user.id, "a", [1.0, 0.0], [0.0, 1.0], [1.0, 1.0])
    save(queries, store, user.id, "a", [0.5, 0.5])

    assert ArticleChunk.select().bind(store.db).count() == 1
    counts = ArticleEmbedding.select(ArticleEmbedding.chunk_count).tuples().bind(store.db)
    assert list(counts) == [(1,)]


def test_vectors_of_a_text_that_changed_meanwhile_are_not_stored(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    # GIVEN an article read for embedding, then edited by a sync before its vectors came back
    apply_as_worker(store, user.id, [article("a")], [], T0)
    read = store.reconcile.load_index(user.id)["a"]
    apply_as_worker(store, user.id, [article("a", body="Edited.")], [], at(1))

    # WHEN the vectors of the old text are saved, THEN nothing is written and it stays due
    saved = queries.save(
        read.id, read.content_hash, "old", chunking=CHUNKING, model=MODEL, chunks=rows([1.0]), now=T0
    )
    assert saved is False
    assert ArticleChunk.select().bind(store.db).count() == 0
    assert len(queries.due(user.id, MODEL, CHUNKING, limit=10)) == 1


def test_an_unchanged_text_keeps_its_vectors_under_the_new_article_hash(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a")], [], T0)
    save(queries, store, user.id, "a", [1.0, 0.0])
    apply_as_worker(store, user.id, [article("a", tags=("new",))], [], at(1))  # a tag: another hash
    [due] = queries.due(user.id, MODEL, CHUNKING, limit=10)

    assert queries.keep(due.article_id, due.article_hash, "text-hash-a") is True
    assert queries.due(user.id, MODEL, CHUNKING, limit=10) == []
    assert queries.keep(due.article_id, due.article_hash, "another text") is False


def test_missing_vectors_are_counted_by_user(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    bob = store.users.add_user("bob", "bob@example.com", 102, "bob/blog")
    apply_as_worker(store, user.id, [article("a"), article("b"), article("c")], [], T0)
    apply_as_worker(store, bob.id, [article("x")], [], T0)
    save(queries, store, user.id, "a", [1.0])

    assert queries.missing_count(MODEL, CHUNKING) == {"alice": 2, "bob": 1}
    assert queries.missing_count(MODEL, CHUNKING, user_id=bob.id) == {"bob": 1}
    save(queries, store, bob.id, "x", [1.0])
    assert queries.missing_count(MODEL, CHUNKING, user_id=bob.id) == {}


def test_the_fingerprint_moves_when_vectors_are_written_or_an_article_is_archived(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)
    empty = queries.fingerprint(user.id, MODEL)
    save(queries, store, user.id, "a", [1.0])
    save(queries, store, user.id, "b", [1.0])
    both = queries.fingerprint(user.id, MODEL)
    apply_as_worker(store, user.id, [], ["b"], at(1))

    assert len({empty, both, queries.fingerprint(user.id, MODEL)}) == 3
    assert queries.fingerprint(user.id, MODEL) == queries.fingerprint(user.id, MODEL)


def test_vectors_of_a_stray_dimension_are_left_out(
    store: PeeweeStore, user: UserRecord, queries: EmbeddingQueries
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b"), article("c")], [], T0)
    save(queries, store, user.id, "a", [1.0, 0.0])
    save(queries, store, user.id, "b", [0.0, 1.0])
    save(queries, store, user.id, "c", [0.0, 1.0, 0.0])

    found = queries.vectors(user.id, MODEL)

    assert found.matrix.shape == (2, 2)
    assert ids_of(store, user.id)["c"] not in found.article_ids.tolist()


def test_packing_is_little_endian_float32() -> None:
    assert pack(np.array([1.0], dtype=np.float32)) == b"\x00\x00\x80\x3f"
    assert unpack(pack(np.array([0.25, -1.0]))).tolist() == [0.25, -1.0]


def test_the_step_adds_the_tables_to_a_database_of_the_version_before(db_url: str) -> None:
    # GIVEN a database at the version before the vectors' tables
    db = open_database(db_url)
    make_old_database(db)
    place = next(i for i, (_, _, run) in enumerate(STEPS) if run.__name__ == "article_vectors")
    with connection(db):
        migrate(db, list(STEPS[:place]))
        assert not {"article_embeddings", "article_chunks"} & set(db.get_tables())

        # WHEN it is migrated, THEN the tables are there, empty, as this version describes them
        report = migrate(db)
        assert STEPS[place][0] in [number for number, _ in report.applied]
        assert {"article_embeddings", "article_chunks"} <= set(db.get_tables())
        assert schema_differences(db) == []
        assert peewee.Table("article_chunks").select().bind(db).count() == 0
    db.close()
