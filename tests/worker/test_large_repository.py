"""A repository of 5,000 articles with ten tags each, nearly every article with a tag set of its own,
syncs on SQLite and on MariaDB, through the folder source and through GitHub: a first sync, a push
that changes every tag set, a delete of most articles, a rebuild. Every published article is served.

The articles are a few lines each, so the test measures what grows with their number (statements,
parameters, tag sets), not with their bytes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from function.sources.folder import DirectorySource
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from function.worker.sync import Worker
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.statements import count_statements

ARTICLES = 5000
TAGS = 10
KEPT = 400  # articles left after the big delete


def tags_of(number: int, version: int) -> tuple[str, ...]:
    """Ten tags out of 1,009, a different set for (nearly) every article and every version."""
    return tuple(sorted({f"topic{(number * 7 + k * 131 + version * 17) % 1009}" for k in range(TAGS)}))


def repository(version: int, count: int = ARTICLES) -> dict[str, bytes]:
    return {
        f"articles/post-{n:05}.md": article(f"Post {n}", tags=tags_of(n, version), body=f"Body {n}.")
        for n in range(count)
    }


def expected(version: int, numbers: range) -> dict[str, tuple[str, ...]]:
    return {f"post-{n:05}": tags_of(n, version) for n in numbers}


def served_by_store(db: Any) -> dict[str, tuple[str, ...]]:
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles(USER)
    assert articles is not None
    return {a.slug: tuple(sorted(a.tags)) for a in articles}


def statements_per_transaction(statements: list[str]) -> list[int]:
    counts: list[int] = []
    inside = None
    for statement in statements:
        if statement.startswith("BEGIN"):
            inside = 0
        elif statement == "COMMIT" and inside is not None:
            counts.append(inside)
            inside = None
        elif inside is not None:
            inside += 1
    return counts


def write_folder(root: Path, files: dict[str, bytes | None]) -> None:
    for path, data in files.items():
        target = root / path
        if data is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def test_5000_articles_from_a_folder(db_url: str, tmp_path: Path) -> None:
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        PeeweeStore(db).users.add_user(USER, "alice@example.com", 1, "octo/blog")
    root = tmp_path / "repo"
    source = DirectorySource(root)

    def sync(**options: Any) -> Any:
        with connection(db):
            return Worker(PeeweeStore(db), source).sync_user(USER, **options)

    # First sync
    write_folder(root, repository(0))  # type: ignore[arg-type]
    first = sync()
    assert (first.succeeded, first.failed, first.written) == (ARTICLES, 0, ARTICLES)
    assert served_by_store(db) == expected(0, range(ARTICLES))

    # A change of every tag set
    write_folder(root, repository(1))  # type: ignore[arg-type]
    with count_statements(db) as seen:
        retagged = sync()
    assert (retagged.written, retagged.failed) == (ARTICLES, 0)
    assert served_by_store(db) == expected(1, range(ARTICLES))
    # ... in transactions of a few dozen statements (TiDB refuses more than 5,000 in one)
    assert max(statements_per_transaction(seen.statements)) <= 60

    # Most articles deleted: held by the safety valve, then, confirmed, archived and no longer served
    write_folder(root, {f"articles/post-{n:05}.md": None for n in range(KEPT, ARTICLES)})
    held = sync()
    assert held.held is not None and (held.held.going, held.archived) == (ARTICLES - KEPT, 0)
    deleted = sync(confirm_removal=True)
    assert (deleted.archived, deleted.succeeded) == (ARTICLES - KEPT, KEPT)
    assert served_by_store(db) == expected(1, range(KEPT))

    # A rebuild reads and renders every article again; nothing served changes
    rebuilt = sync(rebuild=True)
    assert (rebuilt.fetched, rebuilt.failed) == (KEPT, 0)
    assert served_by_store(db) == expected(1, range(KEPT))
    db.close()


def test_5000_articles_through_github(make_blog: Callable[..., Blog]) -> None:
    blog = make_blog()

    def served_over_http() -> dict[str, tuple[str, ...]]:
        return {a["slug"]: tuple(sorted(a["tags"])) for a in blog.articles(limit="100")}

    # First sync (one push delivery)
    blog.github.set_files(repository(0))
    answer = blog.push(delivery="first")
    assert answer.status_code == 200, answer.get_json()
    assert (answer.get_json()["succeeded"], answer.get_json()["failed"]) == (ARTICLES, 0)
    assert served_over_http() == expected(0, range(ARTICLES))

    # A push that changes every tag set
    blog.commit(repository(1))  # type: ignore[arg-type]
    answer = blog.push(delivery="retag")
    assert answer.status_code == 200, answer.get_json()
    assert (answer.get_json()["written"], answer.get_json()["failed"]) == (ARTICLES, 0)
    assert served_over_http() == expected(1, range(ARTICLES))

    # A push that deletes most articles: held by the safety valve, then redelivered with it confirmed
    blog.commit({f"articles/post-{n:05}.md": None for n in range(KEPT, ARTICLES)})
    assert blog.push(delivery="delete").get_json()["status"] == "held"
    with blog.store() as store:
        user = store.users.get_user(USER)
        assert user is not None
        store.users.confirm_removal(user.id, store.reads.served_count(USER))
    answer = blog.push(delivery="delete")
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["archived"] == ARTICLES - KEPT
    assert served_over_http() == expected(1, range(KEPT))

    # A rebuild from the command line's entry point
    with blog.store() as store:
        rebuilt = Worker(store, blog.source).sync_user(USER, rebuild=True)
    assert (rebuilt.fetched, rebuilt.failed) == (KEPT, 0)
    assert served_over_http() == expected(1, range(KEPT))
