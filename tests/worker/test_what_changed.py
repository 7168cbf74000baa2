"""The answer to a push says what changed: an edit, a no-op, a deletion and a failure read differently
(``written``, ``unchanged``, ``archived``, ``failedPaths``), and ``blog-api deliveries`` shows the same."""

from __future__ import annotations

from typing import Any

from function.worker.sync import Worker
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.deliveries import delivery_uuid


def changes(answer: Any) -> dict[str, Any]:
    body = answer.get_json()
    assert answer.status_code == 200, body
    return {key: body[key] for key in ("written", "archived", "unchanged", "failed", "failedPaths")}


def test_an_edit_a_no_op_a_deletion_and_a_failure_each_say_what_changed(blog: Blog) -> None:
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    first = changes(blog.push(delivery="first"))
    # A new head that changes no article (a replay of the same head would be skipped as already synced).
    blog.commit({"notes/todo.txt": b"not an article"})
    same = changes(blog.push(delivery="same"))
    blog.commit({"articles/a.md": article("A, edited")})
    edit = changes(blog.push(delivery="edit"))
    blog.commit({"articles/b.md": None, "articles/c.md": b"---\ntitle: [unclosed\n---\n"})
    gone = changes(blog.push(delivery="gone"))

    assert first == {"written": 2, "archived": 0, "unchanged": 0, "failed": 0, "failedPaths": []}
    assert same == {"written": 0, "archived": 0, "unchanged": 2, "failed": 0, "failedPaths": []}
    assert edit == {"written": 1, "archived": 0, "unchanged": 1, "failed": 0, "failedPaths": []}
    assert gone == {
        "written": 0,
        "archived": 1,
        "unchanged": 1,
        "failed": 1,
        "failedPaths": ["articles/c.md"],
    }
    # The delivery record keeps the same counts, for `blog-api deliveries`.
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid("edit"))
    assert record is not None and (record.written, record.unchanged, record.archived) == (1, 1, 0)


def test_a_sync_says_which_slugs_readers_see_change_across_its_transactions(blog: Blog) -> None:
    # GIVEN five published articles and a draft, synced
    files = {f"articles/a{i}.md": article(f"A{i}") for i in range(5)}
    blog.commit({**files, "articles/draft.md": article("Draft", publish=False)})
    with blog.store() as store:
        Worker(store, blog.source).sync_user(USER)

    # WHEN one push edits two, unpublishes one, deletes one, publishes the draft and adds one,
    # synced in transactions of two articles each
    blog.commit(
        {
            "articles/a0.md": article("A0, edited"),
            "articles/a1.md": article("A1, edited"),
            "articles/a2.md": article("A2", publish=False),
            "articles/a3.md": None,
            "articles/draft.md": article("Draft"),
            "articles/new.md": article("New"),
        }
    )
    with blog.store() as store:
        summary = Worker(store, blog.source, batch_max_articles=2).sync_user(USER)

    # THEN the summary names each slug once, by what readers see
    assert sorted(summary.changes.published) == ["draft", "new"]
    assert sorted(summary.changes.updated) == ["a0", "a1"]
    assert sorted(summary.changes.unpublished) == ["a2", "a3"]


def test_a_sync_that_changes_nothing_readers_see_has_no_changes(blog: Blog) -> None:
    blog.commit({"articles/a.md": article("A"), "articles/d.md": article("D", publish=False)})
    with blog.store() as store:
        Worker(store, blog.source).sync_user(USER)
    blog.commit({"articles/d.md": article("D", publish=False, body="Still a draft."), "x.txt": b"x"})

    with blog.store() as store:
        summary = Worker(store, blog.source).sync_user(USER)

    assert summary.written == 1
    assert not summary.changes
