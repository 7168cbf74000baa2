"""A Zenn repository with two books, through the GitHub App path and through ``blog-api sync`` on the
folder source (SQLite and MariaDB): chapters in Zenn's order, a one-chapter push that reads one blob,
a broken book that fails alone, webhooks naming the books."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from function.aws.deadline import Deadline
from function.sources.port import FetchResult, RepoFile, RepoRef, Snapshot
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync import Worker
from tests.kit.blog_checks import delivery
from tests.kit.blog_fixtures import Blog
from tests.kit.cli import run_cli
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.kit.statements import count_statements

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "zenn-books"


def fixture_files() -> dict[str, bytes]:
    return {
        p.relative_to(FIXTURE).as_posix(): p.read_bytes() for p in sorted(FIXTURE.rglob("*")) if p.is_file()
    }


def chapters(blog: Blog, slug: str) -> list[str]:
    answer = blog.client.get(f"/users/alice/books/{slug}")
    assert answer.status_code == 200, answer.get_json()
    return [c["slug"] for c in answer.get_json()["chapters"]]


def test_a_zenn_repository_serves_its_books_in_zenn_order(blog: Blog) -> None:
    blog.github.set_files(fixture_files())

    answer = blog.push(delivery="books-1").get_json()

    # One article and three books (one a draft): all in sync.
    assert {k: answer[k] for k in ("processed", "succeeded", "failed")} == {
        "processed": 4,
        "succeeded": 4,
        "failed": 0,
    }
    listed = blog.client.get("/users/alice/books").get_json()["books"]
    assert sorted(b["slug"] for b in listed) == ["lambda-field-notes", "pulumi-in-practice"]
    assert chapters(blog, "lambda-field-notes") == ["intro", "cold-starts", "1.packaging"]
    assert chapters(blog, "pulumi-in-practice") == ["stacks", "components", "testing"]
    chapter = blog.client.get("/users/alice/books/pulumi-in-practice/chapters/components").get_json()
    assert chapter["position"] == 2 and "One resource per part." in chapter["contentHtml"]
    assert [a["slug"] for a in blog.articles()] == ["hello-zenn-books"]


def test_a_push_changing_one_chapter_fetches_one_blob(blog: Blog) -> None:
    blog.github.set_files(fixture_files())
    blog.push(delivery="1")
    blog.commit({"books/lambda-field-notes/cold-starts.md": b"---\ntitle: Cold starts\n---\n\nMeasured.\n"})
    blog.github.reset_records()

    with count_statements(blog.db) as seen:
        answer = blog.push(delivery="2").get_json()

    assert answer["failed"] == 0
    assert blog.github.count("blob") == 1 and blog.github.count("tarball") == 0, blog.github.counts()
    writes = seen.matching("INSERT") + seen.matching("UPDATE") + seen.matching("DELETE")
    # Of the writes, only the chapter and its book are the books' (the rest record the delivery).
    assert len([s for s in writes if "book" in s]) == 2, writes
    on_books = [s for s in seen.statements if "book" in s]
    # Books, chapters and failed books read (one SELECT each), then the book and its chapter written.
    assert len(on_books) == 5, on_books
    # 18 for the articles and books, and one SELECT of the stored images' rows and references.
    assert seen.count <= 19, seen.statements
    chapter = blog.client.get("/users/alice/books/lambda-field-notes/chapters/cold-starts").get_json()
    assert "Measured." in chapter["contentHtml"]


def test_a_broken_config_fails_that_book_only(blog: Blog) -> None:
    files = fixture_files()
    files["books/lambda-field-notes/config.yaml"] = b"title: [unclosed\n"
    blog.github.set_files(files)

    answer = blog.push(delivery="1").get_json()

    assert answer["failed"] == 1
    assert answer["failedPaths"] == ["books/lambda-field-notes/config.yaml"]
    assert blog.client.get("/users/alice/books/lambda-field-notes").status_code == 404
    assert chapters(blog, "pulumi-in-practice") == ["stacks", "components", "testing"]
    assert [a["slug"] for a in blog.articles()] == ["hello-zenn-books"]
    record = delivery(blog, "1")
    assert record.outcome == "partial"
    assert "books/lambda-field-notes/config.yaml" in (record.error or "")

    # Not fetched again while its blob is the same.
    blog.commit({"articles/hello-zenn-books.md": files["articles/hello-zenn-books.md"] + b"\nMore.\n"})
    blog.github.reset_records()
    again = blog.push(delivery="2").get_json()
    assert again["failedPaths"] == ["books/lambda-field-notes/config.yaml"]
    assert blog.github.count("blob") == 1  # the article only


@pytest.fixture
def folder_env(db_url: str, tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    env: dict[str, str | None] = {
        "DATABASE_URL": db_url,
        "ARTICLE_SOURCE": f"dir:{root}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return {"env": env, "root": root, "url": db_url}


def test_blog_api_sync_of_a_folder_serves_the_books_and_rebuild_renders_them_again(
    folder_env: dict[str, Any],
) -> None:
    env, root = folder_env["env"], folder_env["root"]

    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "failed=0" in result.stdout
    db = open_database(folder_env["url"])
    with connection(db):
        store = PeeweeStore(db)
        book = store.book_reads.published_book("demo", "pulumi-in-practice")
        assert book is not None and [c.slug for c in book.chapters] == ["stacks", "components", "testing"]
    (root / "books/pulumi-in-practice/2.components.md").unlink()
    assert run_cli("sync", "--user", "demo", env=env).exit_code == 0
    rebuilt = run_cli("sync", "--user", "demo", "--rebuild", env=env)
    assert rebuilt.exit_code == 0 and "failed=0" in rebuilt.stdout
    with connection(db):
        book = PeeweeStore(db).book_reads.published_book("demo", "pulumi-in-practice")
        assert book is not None and [c.slug for c in book.chapters] == ["stacks", "testing"]
    db.close()


class _Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


class _CostlySource:
    """The blog's source, every fetched file costing 10 s on a fake clock."""

    def __init__(self, source: Any, clock: _Clock) -> None:
        self._source, self._clock = source, clock

    def snapshot(self, repo: RepoRef) -> Snapshot:
        return self._source.snapshot(repo)

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        self._clock.now += 10.0 * len(files)
        return self._source.fetch(repo, snapshot, files, wanted_in_all=wanted_in_all)


def test_books_wait_for_the_retry_when_the_articles_used_the_time_budget(blog: Blog) -> None:
    blog.github.set_files(fixture_files())
    clock = _Clock()
    info = DeliveryInfo(delivery_id="d-budget", event="push", received_at=datetime(2026, 12, 3))
    push = PushRef(REPO, "main", INSTALLATION_ID, after=blog.github.head(repo=REPO))

    # 15 s left: the article takes 10, leaving less than the 10 s commit margin for the books.
    with blog.store() as store:
        worker = Worker(store, _CostlySource(blog.source, clock), commit_margin_s=10.0)
        summary = worker.process_push(info, push, deadline=Deadline(clock.now + 15, clock))

    assert summary.left == ["books/"] and summary.outcome == "failed"
    assert blog.client.get("/users/alice/books").get_json()["books"] == []
    with blog.store() as store:
        worker = Worker(store, _CostlySource(blog.source, clock), commit_margin_s=10.0)
        again = worker.process_push(info, push, deadline=Deadline(clock.now + 600, clock))
    assert again.left == [] and again.outcome == "success"
    assert len(blog.client.get("/users/alice/books").get_json()["books"]) == 2
