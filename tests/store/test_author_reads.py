"""What the author's preview reads: every article of the repository, drafts and scheduled ones included,
archived ones not; on SQLite and MariaDB."""

from __future__ import annotations

import pytest

from function.store.author_reads import AuthorReads
from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    store.add_user("bob", "bob@example.com", 102)
    apply_as_worker(store, store.add_user("other", "o@example.com", 103).id, [article("not-yours")], [], T0)
    return store.add_user("alice", "alice@example.com", 101)


def test_drafts_come_first_then_published_articles_newest_first(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("old", tags=("aws",))], [], T0)
    apply_as_worker(store, user.id, [article("draft", publish=False)], [], at(10))
    apply_as_worker(store, user.id, [article("new")], [], at(60))

    found = AuthorReads(store.db).articles("alice")

    assert [(a.slug, a.publish) for a in found] == [("draft", False), ("new", True), ("old", True)]
    assert found[2].tags == ("aws",) and found[0].published_at is None
    assert found[0].content_html == ""  # a list carries no bodies


def test_an_archived_article_is_gone_and_a_scheduled_one_is_marked(
    store: PeeweeStore, user: UserRecord
) -> None:
    apply_as_worker(store, user.id, [article("kept"), article("removed")], [], T0)
    apply_as_worker(store, user.id, [], ["removed"], at(5))
    apply_as_worker(store, user.id, [article("later")], [], at(3600))

    reads = AuthorReads(store.db)
    assert {a.slug for a in reads.articles("alice")} == {"kept", "later"}
    assert reads.article("alice", "removed") is None
    later = reads.article("alice", "later")
    assert later is not None and later.scheduled(at(10)) and not later.scheduled(at(7200))


def test_one_article_comes_with_its_html_draft_or_not(store: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(store, user.id, [article("draft", publish=False, body="Soon.")], [], T0)

    found = AuthorReads(store.db).article("alice", "draft")

    assert found is not None and found.content_html == "<p>Soon.</p>" and found.path == "articles/draft.md"
    assert AuthorReads(store.db).article("bob", "draft") is None
