"""The books' sync on SQLite and MariaDB from a folder read as the repository: Zenn's chapter order,
drafts hidden, only changed files read, a broken book failing alone and remembered by its blob."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from function.sources.folder import DirectorySource
from function.sources.port import FetchResult, RepoFile, RepoRef, Snapshot
from function.store.facade import PeeweeStore
from function.worker.sync.books import BookSync, BookSyncResult
from tests.kit.statements import count_statements

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "zenn-books"
REPO = RepoRef("octo/blog", "main")
NOW = datetime(2026, 12, 1, 9, 0)


class RecordingSource:
    """The folder source, recording which paths each fetch asked for."""

    def __init__(self, root: Path) -> None:
        self.inner = DirectorySource(root)
        self.fetched: list[str] = []

    def snapshot(self, repo: RepoRef) -> Snapshot:
        return self.inner.snapshot(repo)

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        self.fetched += [f.path for f in files]
        return self.inner.fetch(repo, snapshot, files)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    return root


def sync(store: PeeweeStore, source: Any, *, rebuild: bool = False) -> BookSyncResult:
    user = store.users.get_user("alice") or store.users.add_user("alice", "a@example.com", 1)
    books = BookSync(store.books, source, clock=lambda: NOW)
    return books.run(user.id, REPO, source.snapshot(REPO), rebuild=rebuild)


def test_two_books_are_served_in_zenn_order(store: PeeweeStore, repo: Path) -> None:
    result = sync(store, RecordingSource(repo))

    assert (result.books, result.failed, result.written, result.drafts) == (3, 0, 3, 1)
    page = store.book_reads.published_books_page("alice", limit=10, now=NOW)
    assert page is not None
    # The draft book is not served.
    assert sorted(b.slug for b in page.books) == ["lambda-field-notes", "pulumi-in-practice"]
    listed = store.book_reads.published_book("alice", "lambda-field-notes", now=NOW)
    assert listed is not None
    assert [(c.slug, c.title, c.position) for c in listed.chapters] == [
        ("intro", "Introduction", 1),
        ("cold-starts", "Cold starts", 2),
        ("1.packaging", "Packaging", 3),
    ]  # by the config's list; unfinished.md is not listed, so not in the book
    assert (listed.title, listed.tags, listed.cover, listed.chapter_count) == (
        "Lambda field notes",
        ("aws", "lambda", "python"),
        None,
        3,
    )
    numbered = store.book_reads.published_book("alice", "pulumi-in-practice", now=NOW)
    assert numbered is not None
    assert [c.slug for c in numbered.chapters] == ["stacks", "components", "testing"]  # 1, 2, 10
    assert numbered.cover == "books/pulumi-in-practice/cover.png"
    chapter = store.book_reads.published_chapter("alice", "lambda-field-notes", "cold-starts", now=NOW)
    assert chapter is not None and "<h2" in chapter.content_html
    assert [entry["text"] for entry in chapter.toc] == ["Measuring", "Shrinking"]
    assert store.book_reads.published_book("alice", "draft-book-notes", now=NOW) is None
    assert store.book_reads.published_chapter("alice", "lambda-field-notes", "unfinished", now=NOW) is None


def test_a_push_changing_one_chapter_reads_one_file(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    (repo / "books/pulumi-in-practice/2.components.md").write_text("---\ntitle: Components\n---\n\nNew.\n")
    source = RecordingSource(repo)

    with count_statements(store.db) as seen:
        result = sync(store, source)

    assert source.fetched == ["books/pulumi-in-practice/2.components.md"]
    assert (result.written, result.failed, result.changes.updated) == (1, 0, ["pulumi-in-practice"])
    # get_user, the index (books, chapters), the failures, then one transaction: the chapter and the book.
    assert seen.count <= 9, seen.statements
    chapter = store.book_reads.published_chapter("alice", "pulumi-in-practice", "components", now=NOW)
    assert chapter is not None and chapter.title == "Components" and chapter.position == 2


def test_a_push_changing_nothing_reads_and_writes_nothing(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    source = RecordingSource(repo)

    with count_statements(store.db) as seen:
        result = sync(store, source)

    assert source.fetched == []
    assert result.written == 0 and not result.changes
    assert seen.matching("INSERT") == seen.matching("UPDATE") == []


def test_renumbering_moves_chapters_without_reading_them(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    folder = repo / "books/pulumi-in-practice"
    (folder / "10.testing.md").rename(folder / "0.testing.md")
    source = RecordingSource(repo)

    sync(store, source)

    book = store.book_reads.published_book("alice", "pulumi-in-practice", now=NOW)
    assert book is not None and [c.slug for c in book.chapters] == ["testing", "stacks", "components"]
    assert source.fetched == ["books/pulumi-in-practice/0.testing.md"]  # its path changed, not the others


def test_a_broken_config_fails_that_book_only_and_is_not_read_again(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    (repo / "books/lambda-field-notes/config.yaml").write_text("title: [unclosed\n")
    (repo / "books/pulumi-in-practice/1.stacks.md").write_text("---\ntitle: Stacks, again\n---\n\nDev.\n")

    result = sync(store, RecordingSource(repo))

    assert [(f.path, f.remembered) for f in result.failures] == [
        ("books/lambda-field-notes/config.yaml", False)
    ]
    assert "not valid YAML" in result.failures[0].message
    assert result.changes.updated == ["pulumi-in-practice"]  # the other book synced
    served = store.book_reads.published_book("alice", "lambda-field-notes", now=NOW)
    assert served is not None and len(served.chapters) == 3  # left as it was

    source = RecordingSource(repo)
    again = sync(store, source)
    assert source.fetched == []  # remembered by its blob
    assert [(f.path, f.remembered) for f in again.failures] == [
        ("books/lambda-field-notes/config.yaml", True)
    ]

    (repo / "books/lambda-field-notes/config.yaml").write_text("title: Fixed\npublished: true\n")
    (repo / "books/lambda-field-notes/1.packaging.md").rename(repo / "books/lambda-field-notes/1.pack.md")
    healed = sync(store, RecordingSource(repo))
    assert healed.failures == []
    book = store.book_reads.published_book("alice", "lambda-field-notes", now=NOW)
    assert book is not None and book.title == "Fixed" and [c.slug for c in book.chapters] == ["pack"]
    user = store.users.get_user("alice")
    assert user is not None and store.books.load_book_failures(user.id) == {}


def test_a_new_chapter_that_does_not_render_is_left_out_and_a_bad_folder_name_fails_alone(
    store: PeeweeStore, repo: Path
) -> None:
    (repo / "books/pulumi-in-practice/1.stacks.md").write_text("no front matter\n")
    (repo / "books/short").mkdir()
    (repo / "books/short/config.yaml").write_text("title: Short\n")

    result = sync(store, RecordingSource(repo))

    # The bad folder fails alone; the book with a broken chapter is served with the two others.
    assert [f.path for f in result.failures] == ["books/short/"]
    book = store.book_reads.published_book("alice", "pulumi-in-practice", now=NOW)
    assert book is not None
    assert [(c.slug, c.position) for c in book.chapters] == [("components", 1), ("testing", 2)]
    [(path, warning)] = [w for w in result.warnings if w[0].endswith("1.stacks.md")]
    assert path == "books/pulumi-in-practice/1.stacks.md"
    assert warning.startswith("no front matter")
    assert warning.endswith(
        "the book is served without it; fix books/pulumi-in-practice/1.stacks.md to add it"
    )
    assert result.incomplete == ["pulumi-in-practice"]
    assert store.book_reads.published_book("alice", "lambda-field-notes", now=NOW) is not None


def test_a_served_chapter_that_breaks_is_kept_as_it_was(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    (repo / "books/pulumi-in-practice/2.components.md").write_text("---\ntitle: [unclosed\n---\nnew text\n")

    result = sync(store, RecordingSource(repo))

    chapter = store.book_reads.published_chapter("alice", "pulumi-in-practice", "components", now=NOW)
    assert chapter is not None and "One resource per part." in chapter.content_html
    [(_, warning)] = [w for w in result.warnings if w[0].endswith("2.components.md")]
    assert "the book keeps serving the chapter as it was" in warning
    assert result.failed == 0 and result.incomplete == ["pulumi-in-practice"]


def test_listed_chapters_without_a_file_are_named_on_every_sync_and_the_rest_served(
    store: PeeweeStore, repo: Path
) -> None:
    # GIVEN a config listing 100 chapters, of which 27 files exist
    folder = repo / "books/long-course-of-lessons"
    folder.mkdir()
    listed = [f"lesson-{n:03d}" for n in range(1, 101)]
    written = listed[::4] + listed[1:6:4]
    (folder / "config.yaml").write_text(
        "title: Long\npublished: true\nchapters:\n" + "".join(f"  - {c}\n" for c in listed)
    )
    for chapter in written:
        (folder / f"{chapter}.md").write_text(f"---\ntitle: {chapter}\n---\ntext\n")

    first = sync(store, RecordingSource(repo))
    again = sync(store, RecordingSource(repo))

    # THEN the 27 are served in the config's order, and both syncs name the 73 others with their file
    book = store.book_reads.published_book("alice", "long-course-of-lessons", now=NOW)
    assert book is not None
    assert [c.slug for c in book.chapters] == [c for c in listed if c in written]
    for result in (first, again):
        missing = [path for path, _ in result.warnings if path.startswith("books/long-course-of-lessons/")]
        assert missing == [f"books/long-course-of-lessons/{c}.md" for c in listed if c not in written]
        assert result.failed == 0 and result.incomplete == ["long-course-of-lessons"]


def test_a_removed_book_is_archived_and_comes_back(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    kept = repo.parent / "kept"
    shutil.move(repo / "books/pulumi-in-practice", kept)

    result = sync(store, RecordingSource(repo))

    assert result.archived == 1 and result.changes.unpublished == ["pulumi-in-practice"]
    assert store.book_reads.published_book("alice", "pulumi-in-practice", now=NOW) is None
    shutil.move(kept, repo / "books/pulumi-in-practice")
    back = sync(store, RecordingSource(repo))
    assert back.changes.published == ["pulumi-in-practice"]
    assert store.book_reads.published_book("alice", "pulumi-in-practice", now=NOW) is not None


def test_rebuild_reads_every_book_again(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    source = RecordingSource(repo)

    result = sync(store, source, rebuild=True)

    assert result.failed == 0
    assert len(source.fetched) == 3 + 3 + 3 + 1  # three configs, then every chapter of every book


def test_reverting_a_broken_config_forgets_the_failure(store: PeeweeStore, repo: Path) -> None:
    config = repo / "books/lambda-field-notes/config.yaml"
    good = config.read_bytes()
    sync(store, RecordingSource(repo))
    config.write_text("title: [unclosed\n")
    assert sync(store, RecordingSource(repo)).failed == 1
    config.write_bytes(good)  # back to the blob that is stored: nothing to read

    source = RecordingSource(repo)
    result = sync(store, source)

    user = store.users.get_user("alice")
    assert user is not None
    assert (result.failed, source.fetched) == (0, [])
    assert store.books.load_book_failures(user.id) == {}


def test_a_truncated_listing_leaves_the_books_as_they_are(store: PeeweeStore, repo: Path) -> None:
    sync(store, RecordingSource(repo))
    source = RecordingSource(repo)
    full = source.snapshot(REPO)
    partial = Snapshot(full.head_sha, full.files, complete=False, book_files=full.book_files[:2])
    user = store.users.get_user("alice")
    assert user is not None

    result = BookSync(store.books, source, clock=lambda: NOW).run(user.id, REPO, partial)

    assert (result.written, result.archived, source.fetched) == (0, 0, [])
    book = store.book_reads.published_book("alice", "lambda-field-notes", now=NOW)
    assert book is not None and len(book.chapters) == 3
