"""The answer to a push says what changed: an edit, a no-op, a deletion and a failure read differently
(``written``, ``unchanged``, ``archived``, ``failedPaths``), and ``blog-api deliveries`` shows the same."""

from __future__ import annotations

from typing import Any

from tests.kit.blog_fixtures import Blog, article


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
        record = store.get_delivery("edit")
    assert record is not None and (record.written, record.unchanged, record.archived) == (1, 1, 0)
