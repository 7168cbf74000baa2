"""The dir: source lists and fetches what the GitHub source would for the same committed files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from function.errors import SourceUnavailable
from function.sources.folder import DirectorySource
from function.sources.port import FetchedFile, FetchFailure, RepoFile, RepoRef, Snapshot

REPO = RepoRef("owner/blog", None, 1)


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "core.autocrlf=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    write(repo / "articles" / "hello.md", "---\ntitle: Hello\n---\nHi\n")
    write(repo / "articles" / "crlf.md", b"---\r\ntitle: CRLF\r\n---\r\nbody\r\n")
    write(repo / "articles" / "empty.md", b"")
    write(repo / "articles" / "binary.md", bytes(range(256)))
    return repo


def test_blob_shas_equal_git_hash_object(root: Path) -> None:
    snapshot = DirectorySource(root).snapshot(REPO)
    for file in snapshot.files:
        expected = git(root, "hash-object", "--no-filters", file.path).strip()
        assert file.sha == expected, file.path


def test_listing_equals_git_ls_tree_of_the_committed_folder(root: Path) -> None:
    # GIVEN the folder committed to git, with files that are not articles around it
    write(root / "articles" / "nested" / "deep.md", "---\ntitle: x\n---\n")
    write(root / "articles" / "notes.txt", "not markdown")
    write(root / "README.md", "# repo readme")
    os.symlink("hello.md", root / "articles" / "link.md")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "articles")
    # WHEN git lists the direct *.md children of articles/ (what the GitHub tree listing gives)
    tree = git(root, "ls-tree", "HEAD", "articles/")
    expected = {
        RepoFile(path=path, sha=meta.split()[2])
        for meta, path in (line.split("\t") for line in tree.splitlines())
        # regular-file blobs only: the GitHub source skips symlinks (mode 120000)
        if meta.split()[1] == "blob" and meta.split()[0] != "120000" and path.endswith(".md")
    }
    # THEN the directory source lists exactly the same paths and SHAs
    assert set(DirectorySource(root).snapshot(REPO).files) == expected


def test_paths_are_repository_paths(root: Path) -> None:
    paths = [f.path for f in DirectorySource(root).snapshot(REPO).files]
    assert paths == ["articles/binary.md", "articles/crlf.md", "articles/empty.md", "articles/hello.md"]


def test_only_direct_md_children_are_listed(root: Path) -> None:
    write(root / "articles" / "nested" / "deep.md", "x")
    write(root / "articles" / "notes.txt", "x")
    (root / "articles" / "folder.md").mkdir()
    write(root / "other.md", "x")
    paths = {f.path for f in DirectorySource(root).snapshot(REPO).files}
    assert paths == {"articles/binary.md", "articles/crlf.md", "articles/empty.md", "articles/hello.md"}


def test_the_same_files_give_the_same_head(root: Path) -> None:
    source = DirectorySource(root)
    assert source.snapshot(REPO) == source.snapshot(REPO)


def test_a_changed_file_gives_a_new_head_and_sha(root: Path) -> None:
    source = DirectorySource(root)
    before = source.snapshot(REPO)
    write(root / "articles" / "hello.md", "---\ntitle: Hello again\n---\nHi\n")
    after = source.snapshot(REPO)
    assert after.head_sha != before.head_sha
    old, new = dict(_pairs(before.files)), dict(_pairs(after.files))
    assert old.keys() == new.keys()
    assert {path for path in old if old[path] != new[path]} == {"articles/hello.md"}


def _pairs(files: tuple[RepoFile, ...]) -> list[tuple[str, str]]:
    return [(f.path, f.sha) for f in files]


def test_an_added_or_removed_file_gives_a_new_head(root: Path) -> None:
    source = DirectorySource(root)
    first = source.snapshot(REPO).head_sha
    write(root / "articles" / "new.md", "x")
    second = source.snapshot(REPO).head_sha
    (root / "articles" / "new.md").unlink()
    assert len({first, second}) == 2
    assert source.snapshot(REPO).head_sha == first


def test_the_head_does_not_depend_on_the_folder_location(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    for file in (root / "articles").iterdir():
        write(copy / "articles" / file.name, file.read_bytes())
    assert DirectorySource(copy).snapshot(REPO) == DirectorySource(root).snapshot(REPO)


def test_fetch_returns_the_bytes_listed(root: Path) -> None:
    source = DirectorySource(root)
    snapshot = source.snapshot(REPO)
    results = source.fetch(REPO, snapshot, snapshot.files)
    assert results == [
        FetchedFile(path=f.path, sha=f.sha, content=(root / f.path).read_bytes()) for f in snapshot.files
    ]


def test_a_vanished_file_is_a_permanent_fetch_failure(root: Path) -> None:
    source = DirectorySource(root)
    snapshot = source.snapshot(REPO)
    (root / "articles" / "hello.md").unlink()
    [result] = source.fetch(REPO, snapshot, [f for f in snapshot.files if f.path == "articles/hello.md"])
    assert isinstance(result, FetchFailure)
    assert result.path == "articles/hello.md"
    assert result.retryable is False


def test_a_file_changed_since_the_listing_is_not_served_with_the_old_sha(root: Path) -> None:
    source = DirectorySource(root)
    snapshot = source.snapshot(REPO)
    write(root / "articles" / "hello.md", "changed")
    [result] = source.fetch(REPO, snapshot, [f for f in snapshot.files if f.path == "articles/hello.md"])
    assert isinstance(result, FetchFailure)
    assert "changed" in result.message


def test_fetch_refuses_paths_outside_the_articles_folder(root: Path) -> None:
    write(root / "secret.md", "x")
    source = DirectorySource(root)
    snapshot = source.snapshot(REPO)
    bad = [RepoFile("articles/../secret.md", "0" * 40), RepoFile("../secret.md", "0" * 40)]
    assert all(isinstance(r, FetchFailure) for r in source.fetch(REPO, snapshot, bad))


def test_a_missing_root_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable):
        DirectorySource(tmp_path / "nope").snapshot(REPO)


def test_a_root_that_is_a_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable):
        DirectorySource(write(tmp_path / "file", "x")).snapshot(REPO)


def test_fetch_from_a_missing_root_fails_each_file(tmp_path: Path) -> None:
    source = DirectorySource(tmp_path / "nope")
    files = [RepoFile("articles/a.md", "0" * 40)]
    [result] = source.fetch(REPO, Snapshot(head_sha="0" * 40, files=()), files)
    assert isinstance(result, FetchFailure)


def test_a_folder_of_articles_is_read_as_the_articles_folder(tmp_path: Path) -> None:
    # GIVEN dir: pointing straight at a folder of *.md files (no articles/ inside)
    write(tmp_path / "a.md", "---\ntitle: A\n---\n")
    write(tmp_path / "sub" / "b.md", "x")
    source = DirectorySource(tmp_path)
    # THEN they are listed and fetched under the repository's articles/ path
    snapshot = source.snapshot(REPO)
    assert [f.path for f in snapshot.files] == ["articles/a.md"]
    [result] = source.fetch(REPO, snapshot, snapshot.files)
    assert isinstance(result, FetchedFile)
    assert result.content == b"---\ntitle: A\n---\n"


def test_an_existing_articles_folder_wins_over_the_fallback(root: Path) -> None:
    write(root / "top.md", "x")
    assert "articles/top.md" not in {f.path for f in DirectorySource(root).snapshot(REPO).files}


def test_an_empty_root_has_no_articles(tmp_path: Path) -> None:
    snapshot = DirectorySource(tmp_path).snapshot(REPO)
    assert snapshot.files == ()
    assert snapshot.complete


def test_a_custom_articles_dir(tmp_path: Path) -> None:
    write(tmp_path / "posts" / "a.md", "x")
    write(tmp_path / "articles" / "b.md", "x")
    assert [f.path for f in DirectorySource(tmp_path, "posts").snapshot(REPO).files] == ["posts/a.md"]


def test_symlinked_files_are_skipped_as_the_github_source_skips_link_blobs(
    root: Path, tmp_path: Path
) -> None:
    outside = write(tmp_path / "outside.md", "secret")
    os.symlink(outside, root / "articles" / "escape.md")
    os.symlink(root / "articles" / "hello.md", root / "articles" / "alias.md")
    os.symlink(root / "articles" / "missing", root / "articles" / "dangling.md")
    paths = {f.path for f in DirectorySource(root).snapshot(REPO).files}
    assert paths == {"articles/binary.md", "articles/crlf.md", "articles/empty.md", "articles/hello.md"}


def test_an_articles_folder_linking_out_of_the_root_is_not_read(root: Path, tmp_path: Path) -> None:
    write(tmp_path / "elsewhere" / "secret.md", "secret")
    os.symlink(tmp_path / "elsewhere", root / "posts")
    assert DirectorySource(root, "posts").snapshot(REPO).files == ()


def test_a_symlinked_root_is_read(root: Path, tmp_path: Path) -> None:
    os.symlink(root, tmp_path / "link")
    assert DirectorySource(tmp_path / "link").snapshot(REPO) == DirectorySource(root).snapshot(REPO)


def test_badly_named_md_files_are_listed_and_non_articles_are_not(root: Path) -> None:
    write(root / "articles" / "hello world.md", "x")
    for name in (".hidden.md", "_template.md", "README.md", "readme.md"):
        write(root / "articles" / name, "x")
    paths = {f.path for f in DirectorySource(root).snapshot(REPO).files}
    assert "articles/hello world.md" in paths
    assert not paths & {
        "articles/.hidden.md",
        "articles/_template.md",
        "articles/README.md",
        "articles/readme.md",
    }


def test_non_utf8_file_names_are_skipped(root: Path) -> None:
    write(Path(os.fsdecode(bytes(root / "articles") + b"/caf\xe9.md")), "x")
    paths = {f.path for f in DirectorySource(root).snapshot(REPO).files}
    assert all(p.isascii() for p in paths)
    assert len(paths) == 4
