"""``dir:PATH`` takes a repository's root, or finds the root from its articles/ folder, and says which; a
folder in a git work tree dates its articles from the history."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from function.sources.folder import DirectorySource
from function.sources.port import RepoRef
from tests.kit.git_repos import GitRepo

REPO = RepoRef("owner/blog", None, 1)
ARTICLE = "---\ntitle: T\npublished: true\n---\n![](/images/pic.png)\n"
CONFIG = "title: Book\nchapters:\n  - intro\n"
CHAPTER = "---\ntitle: Intro\n---\nhello\n"


def zenn_repository(root: Path) -> Path:
    files: dict[str, str | bytes] = {
        "articles/first.md": ARTICLE,
        "articles/second.md": ARTICLE,
        "books/guide/config.yaml": CONFIG,
        "books/guide/intro.md": CHAPTER,
        "images/pic.png": b"\x89PNG\r\n\x1a\n",
    }
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def test_the_root_is_read_as_the_repository(tmp_path: Path) -> None:
    root = zenn_repository(tmp_path / "blog")

    layout = DirectorySource(root).layout()

    assert (layout.root, layout.articles, layout.reading) == (root, root / "articles", "repository")
    assert layout.described == f"reading the repository at {root} (articles in {root / 'articles'})"


def test_the_articles_folder_of_a_zenn_repository_reads_the_whole_repository(tmp_path: Path) -> None:
    # GIVEN dir: pointing at the articles/ folder of a repository with books and images
    root = zenn_repository(tmp_path / "blog")

    given = DirectorySource(root / "articles")
    snapshot = given.snapshot(REPO)

    # THEN the repository's root is found: the same listing as from the root, books and images included
    assert snapshot == DirectorySource(root).snapshot(REPO)
    assert [f.path for f in snapshot.book_files] == ["books/guide/config.yaml", "books/guide/intro.md"]
    assert "images/pic.png" in {f.path for f in snapshot.others}
    # AND it says which folder it read as what
    assert given.layout().described == (
        f"{root / 'articles'} is the articles folder of the repository at {root}: "
        "reading the repository (articles, books and images)"
    )


def test_the_articles_folder_of_a_git_work_tree_finds_its_root(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "blog")
    repo.commit("2020-01-01T00:00:00Z", {"articles/a.md": ARTICLE})

    layout = DirectorySource(repo.root / "articles").layout()

    assert (layout.root, layout.reading) == (repo.root, "articles folder")


def test_a_plain_folder_called_articles_is_never_widened_to_its_parent(tmp_path: Path) -> None:
    # GIVEN ~/articles-like folder whose parent is no repository (no .git, no books/, no images/)
    (tmp_path / "articles").mkdir()
    (tmp_path / "articles" / "a.md").write_text(ARTICLE)
    (tmp_path / "unrelated.txt").write_text("not part of any blog")

    source = DirectorySource(tmp_path / "articles")
    layout = source.layout()

    assert (layout.root, layout.reading) == (tmp_path / "articles", "bare folder")
    assert "no books or images are read" in layout.described
    assert [f.path for f in source.snapshot(REPO).files] == ["articles/a.md"]
    assert "unrelated.txt" not in {f.path for f in source.snapshot(REPO).others}


def test_a_custom_articles_dir_is_found_from_below_too(tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "content" / "posts").mkdir(parents=True)
    (root / "content" / "posts" / "a.md").write_text(ARTICLE)
    (root / "images").mkdir()

    layout = DirectorySource(root / "content" / "posts", "content/posts").layout()

    assert (layout.root, layout.reading) == (root, "articles folder")


def test_articles_of_a_git_work_tree_carry_the_dates_their_files_were_added(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "blog")
    repo.commit("2019-04-01T09:00:00+09:00", {"articles/old.md": ARTICLE, "README.md": "# blog"})
    repo.commit("2021-08-15T12:30:00Z", {"articles/new.md": ARTICLE})
    repo.commit("2022-01-01T00:00:00Z", rename={"articles/old.md": "articles/renamed.md"})
    repo.write("articles/draft.md", ARTICLE)  # never committed

    snapshot = DirectorySource(repo.root).snapshot(REPO)

    assert dict(snapshot.added_at) == {
        "articles/renamed.md": datetime(2019, 4, 1, 0, 0),
        "articles/new.md": datetime(2021, 8, 15, 12, 30),
    }


@pytest.mark.parametrize("given", ["root", "articles"])
def test_the_dates_are_the_same_whichever_folder_dir_names(tmp_path: Path, given: str) -> None:
    repo = GitRepo(tmp_path / "blog")
    repo.commit("2020-05-05T00:00:00Z", {"articles/a.md": ARTICLE})
    folder = repo.root if given == "root" else repo.root / "articles"

    assert dict(DirectorySource(folder).snapshot(REPO).added_at) == {"articles/a.md": datetime(2020, 5, 5)}


def test_a_bare_folder_of_articles_in_a_work_tree_is_dated_by_repository_path(tmp_path: Path) -> None:
    # A folder of *.md inside some repository, with no articles/ folder: its files are articles/<name>.md.
    repo = GitRepo(tmp_path / "notes")
    repo.commit("2020-06-06T00:00:00Z", {"posts/a.md": ARTICLE})

    snapshot = DirectorySource(repo.root / "posts").snapshot(REPO)

    assert [f.path for f in snapshot.files] == ["articles/a.md"]
    assert dict(snapshot.added_at) == {"articles/a.md": datetime(2020, 6, 6)}


def test_a_folder_outside_git_has_no_dates(tmp_path: Path) -> None:
    root = zenn_repository(tmp_path / "blog")

    assert DirectorySource(root).snapshot(REPO).added_at == {}
