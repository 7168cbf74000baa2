"""A statement that fails in the middle of a sync reaches the user in words: which step of which chunk
failed, that the chunk was rolled back, and what is already served (the chunks committed before it).
Never the driver's message alone. The failing statement is injected with a trigger, on SQLite and on
MariaDB, through the CLI (folder source) and through a push (the delivery record)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import peewee

from function.store.backends import is_mysql, open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit.blog_checks import delivery
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.cli import run_cli

ARTICLES = 1500  # two chunks of changed files (1,000 each)
FAILING = "post-01250"  # in the second chunk (the triggers below name it)


def repository() -> dict[str, bytes]:
    return {
        f"articles/post-{n:05}.md": article(f"Post {n}", tags=(f"t{n % 50}", "all"), body="B.")
        for n in range(ARTICLES)
    }


def fail_tag_pairs_of_the_failing_article(db: peewee.Database) -> None:
    """Make the database refuse the tag pairs of ``FAILING``, as a broken statement would."""
    if is_mysql(db):
        db.execute_sql(
            "CREATE TRIGGER fault_pairs BEFORE INSERT ON article_tags FOR EACH ROW "
            "IF (SELECT slug FROM articles WHERE id = NEW.article_id) = 'post-01250' THEN "
            "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'; END IF"
        )
    else:
        db.execute_sql(
            "CREATE TRIGGER fault_pairs BEFORE INSERT ON article_tags "
            "WHEN (SELECT slug FROM articles WHERE id = NEW.article_id) = 'post-01250' "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )


def served(db: peewee.Database) -> int:
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles(USER)
    return len(articles or [])


def assert_in_words(text: str) -> None:
    assert "writing tags of chunk 2/2 failed" in text, text
    assert "injected failure" in text
    assert "rolled back" in text
    assert "the 1000 articles committed before it (chunk 1) are served" in text, text


def test_the_cli_names_the_step_the_chunk_and_what_is_served(db_url: str, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for path, data in repository().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    env: dict[str, str | None] = {
        "DATABASE_URL": db_url,
        "ARTICLE_SOURCE": f"dir:{root}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", USER, "--email", "a@example.com", env=env).exit_code == 0
    db = open_database(db_url)
    with connection(db):
        fail_tag_pairs_of_the_failing_article(db)

    result = run_cli("sync", "--user", USER, env=env)

    assert result.exit_code != 0
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert_in_words(result.stderr)
    assert served(db) == 1000  # the first chunk, committed before the failure; nothing of the second
    db.close()


def test_the_delivery_record_names_the_step_the_chunk_and_what_is_served(
    make_blog: Callable[..., Blog],
) -> None:
    blog = make_blog()
    blog.github.set_files(repository())
    with blog.store() as store:
        fail_tag_pairs_of_the_failing_article(store.db)

    answer = blog.push(delivery="d-fault")

    assert answer.status_code >= 500
    record = delivery(blog, "d-fault")  # the label's delivery id, as GitHub's header carried it
    assert record.outcome == "failed" and record.error is not None
    assert_in_words(record.error)
    assert served(blog.db) == 1000
