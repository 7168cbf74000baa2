"""Each user's tags are their own rows: blogs with a tag in common never write, lock or wait on the same
row (on TiDB a foreign-key check locks the parent row as ``SELECT … FOR UPDATE`` does), and one blog's
tag changes never reach another's."""

from __future__ import annotations

import pytest

from function.store.backends import open_database
from function.store.batching import batched_transaction
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.models import Tag
from function.store.schema import create_tables
from function.store.tag_rewrite import queue_tag_rewrite
from tests.kit.builders import T0, apply_as_worker, article, at


def served_tags(store: PeeweeStore, user: str) -> dict[str, tuple[str, ...]]:
    views = store.reads.published_articles(user)
    assert views is not None
    return {view.slug: tuple(sorted(view.tags)) for view in views}


def tag_rows(store: PeeweeStore) -> set[tuple[int, str]]:
    rows = store.db.execute_sql("SELECT user_id, path FROM tags").fetchall()
    return {(user_id, path) for user_id, path in rows}


def test_two_blogs_with_the_same_tags_each_have_their_own_rows(store: PeeweeStore) -> None:
    alice = store.users.add_user("alice", "alice@example.com", 101)
    bob = store.users.add_user("bob", "bob@example.com", 202)

    # WHEN both blogs tag articles tech/aws, and alice also tech/tidb
    apply_as_worker(store, alice.id, [article("a1", tags=("tech/aws", "tech/tidb"))], [], T0)
    apply_as_worker(store, bob.id, [article("b1", tags=("tech/aws",))], [], T0)

    # THEN each user has a row for each of their paths, and each blog serves its own tags
    assert tag_rows(store) == {(alice.id, "tech/aws"), (alice.id, "tech/tidb"), (bob.id, "tech/aws")}
    assert served_tags(store, "alice") == {"a1": ("tech/aws", "tech/tidb")}
    assert served_tags(store, "bob") == {"b1": ("tech/aws",)}

    # WHEN alice retags her article
    apply_as_worker(store, alice.id, [article("a1", body="Edited.", tags=("tech/gcp",))], [], at(10))

    # THEN bob's article keeps its tag, and a tag filter of bob's blog finds it, none of alice's
    assert served_tags(store, "alice") == {"a1": ("tech/gcp",)}
    assert served_tags(store, "bob") == {"b1": ("tech/aws",)}
    found = store.reads.published_articles("bob", tag="tech/aws")
    assert found is not None and [view.slug for view in found] == ["b1"]
    assert store.reads.published_articles("alice", tag="tech/aws") == []


@pytest.mark.mysql
def test_a_blog_writes_a_tag_another_blog_is_writing_without_waiting_for_it(mysql_url: str) -> None:
    # GIVEN two blogs, and alice's sync in the middle of its transaction, having written the tag
    # "popular" (a new one) and not committed yet
    first, second = open_database(mysql_url), open_database(mysql_url)
    with connection(first), connection(second):
        create_tables(first)
        alices, bobs = PeeweeStore(first), PeeweeStore(second)
        alice = alices.users.add_user("alice", "alice@example.com", 101)
        bob = alices.users.add_user("bob", "bob@example.com", 202)
        apply_as_worker(alices, alice.id, [article("a1")], [], T0)
        # Were bob's sync to wait for alice's locks, it would fail after a second instead of hanging.
        second.execute_sql("SET SESSION innodb_lock_wait_timeout = 1")

        with batched_transaction(first) as tx:
            queue_tag_rewrite(first, tx, alice.id, [article("a1", tags=("popular",))], [])
            tx.read(Tag.select(Tag.id).where(Tag.path == "popular").bind(first))  # sent, still open

            # WHEN bob's sync writes an article tagged "popular" meanwhile
            result = apply_as_worker(bobs, bob.id, [article("b1", tags=("popular",))], [], T0)

        # THEN it finished without waiting, and both blogs have their tag
        assert result.written == 1
        assert served_tags(bobs, "bob") == {"b1": ("popular",)}
        assert served_tags(alices, "alice") == {"a1": ("popular",)}
    first.close()
    second.close()
