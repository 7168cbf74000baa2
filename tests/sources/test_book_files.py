"""Both sources list a Zenn book's files (config, chapters, cover) with the same blob SHAs, and fetch
them like articles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from function.sources.folder import DirectorySource
from function.sources.port import FetchedFile, RepoRef
from tests.kit.github_fixtures import REPO, GitHubClientParts
from tests.kit.github_standin import GitHubStandIn

MAIN = RepoRef(full_name=REPO, branch="main", installation_id=1)
FILES = {
    "articles/hello.md": b"---\ntitle: Hello\n---\nHi\n",
    "books/lambda-field-notes/config.yaml": b"title: Notes\n",
    "books/lambda-field-notes/1.intro.md": b"---\ntitle: Intro\n---\nHi\n",
    "books/lambda-field-notes/cover.png": b"\x89PNG\r\n",
    "books/lambda-field-notes/_draft.md": b"not a chapter",
    "books/lambda-field-notes/images/a.png": b"not listed",
    "books/.hidden-book-x/config.yaml": b"title: Hidden\n",
    "books/README.md": b"not a book",
}
LISTED = [
    "books/lambda-field-notes/1.intro.md",
    "books/lambda-field-notes/config.yaml",
    "books/lambda-field-notes/cover.png",
]


def test_both_sources_list_the_same_book_files(
    tmp_path: Path, github: GitHubStandIn, make_github_source: Callable[..., GitHubClientParts]
) -> None:
    for path, data in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    github.set_files(FILES)

    from_folder = DirectorySource(tmp_path).snapshot(MAIN)
    from_github = make_github_source().source.snapshot(MAIN)

    assert [f.path for f in from_folder.book_files] == LISTED
    assert [(f.path, f.sha) for f in from_github.book_files] == [
        (f.path, f.sha) for f in from_folder.book_files
    ]
    assert [f.path for f in from_folder.files] == [f.path for f in from_github.files] == ["articles/hello.md"]


def test_a_chapter_edit_changes_the_folder_head_and_is_fetched(tmp_path: Path) -> None:
    chapter = tmp_path / "books/lambda-field-notes/1.intro.md"
    chapter.parent.mkdir(parents=True)
    chapter.write_bytes(b"---\ntitle: Intro\n---\nHi\n")
    source = DirectorySource(tmp_path)
    before = source.snapshot(MAIN)
    chapter.write_bytes(b"---\ntitle: Intro\n---\nHello\n")

    after = source.snapshot(MAIN)
    [fetched] = source.fetch(MAIN, after, list(after.book_files))

    assert after.head_sha != before.head_sha
    assert isinstance(fetched, FetchedFile) and fetched.content.endswith(b"Hello\n")
