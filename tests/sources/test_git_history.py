"""Each file's date from the git history of its folder: real repositories with chosen commit dates."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

import pytest

from function.sources.git_history import added_dates
from tests.kit.git_repos import GitRepo

ARTICLE = "---\ntitle: T\npublished: true\n---\nbody\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "blog")


def test_a_file_is_dated_by_the_author_date_of_the_commit_that_added_it_in_utc(repo: GitRepo) -> None:
    repo.commit("2021-03-04T10:00:00+09:00", {"articles/first.md": ARTICLE})
    repo.commit("2022-05-06T07:08:09+00:00", {"articles/second.md": ARTICLE})

    dates = added_dates(repo.root, ["articles"])

    assert dates == {
        "articles/first.md": datetime(2021, 3, 4, 1, 0, 0),
        "articles/second.md": datetime(2022, 5, 6, 7, 8, 9),
    }


def test_the_author_date_counts_not_the_committer_date(repo: GitRepo) -> None:
    # A rebase rewrites the committer date; the author date is when the article was written.
    repo.commit("2024-01-01T00:00:00Z", {"articles/a.md": ARTICLE}, author_at="2019-07-01T12:00:00Z")

    assert added_dates(repo.root, ["articles"]) == {"articles/a.md": datetime(2019, 7, 1, 12, 0)}


def test_an_edit_keeps_the_date_of_the_addition(repo: GitRepo) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"articles/a.md": ARTICLE})
    repo.commit("2023-01-01T00:00:00Z", {"articles/a.md": ARTICLE + "more\n"})

    assert added_dates(repo.root, ["articles"])["articles/a.md"] == datetime(2020, 1, 1)


def test_a_renamed_file_keeps_the_date_its_first_name_was_added(repo: GitRepo) -> None:
    repo.commit("2020-02-02T00:00:00Z", {"articles/old-name.md": ARTICLE})
    repo.commit("2021-02-02T00:00:00Z", rename={"articles/old-name.md": "articles/new-name.md"})
    repo.commit("2022-02-02T00:00:00Z", rename={"articles/new-name.md": "articles/final.md"})

    assert added_dates(repo.root, ["articles"]) == {"articles/final.md": datetime(2020, 2, 2)}


def test_a_file_deleted_and_added_again_is_dated_by_its_last_addition(repo: GitRepo) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"articles/a.md": ARTICLE})
    repo.commit("2020-06-01T00:00:00Z", remove=["articles/a.md"])
    repo.commit("2021-01-01T00:00:00Z", {"articles/a.md": ARTICLE})

    assert added_dates(repo.root, ["articles"]) == {"articles/a.md": datetime(2021, 1, 1)}


def test_a_file_added_on_a_merged_branch_is_dated_by_the_branch_commit(repo: GitRepo) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"articles/main.md": ARTICLE})
    repo.git("checkout", "-q", "-b", "draft")
    repo.commit("2020-03-01T00:00:00Z", {"articles/branch.md": ARTICLE})
    repo.git("checkout", "-q", "main")
    repo.commit("2020-04-01T00:00:00Z", {"other.txt": "x"})
    repo.git(
        "merge", "-q", "--no-ff", "-m", "merge", "draft", env={"GIT_COMMITTER_DATE": "2020-05-01T00:00:00Z"}
    )

    assert added_dates(repo.root, ["articles"])["articles/branch.md"] == datetime(2020, 3, 1)


def test_only_the_named_folder_is_dated_and_uncommitted_files_are_not(repo: GitRepo) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"articles/a.md": ARTICLE, "books/b/config.yaml": "title: B\n"})
    repo.write("articles/not-committed.md", ARTICLE)

    assert added_dates(repo.root, ["articles"]) == {"articles/a.md": datetime(2020, 1, 1)}


def test_names_outside_ascii_are_read_as_written(repo: GitRepo) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"articles/日本語 の記事.md": ARTICLE})

    assert added_dates(repo.root, ["articles"]) == {"articles/日本語 の記事.md": datetime(2020, 1, 1)}


def test_a_folder_below_the_top_of_the_work_tree_gets_paths_relative_to_itself(repo: GitRepo) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"site/articles/a.md": ARTICLE, "articles/elsewhere.md": ARTICLE})

    assert added_dates(repo.root / "site", ["articles"]) == {"articles/a.md": datetime(2020, 1, 1)}


def test_a_folder_outside_any_work_tree_has_no_dates(tmp_path: Path) -> None:
    (tmp_path / "articles").mkdir()
    (tmp_path / "articles" / "a.md").write_text(ARTICLE)

    assert added_dates(tmp_path, ["articles"]) == {}


def test_without_git_installed_there_are_no_dates(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("2020-01-01T00:00:00Z", {"articles/a.md": ARTICLE})
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    assert added_dates(repo.root, ["articles"]) == {}


def test_one_git_command_dates_the_whole_folder(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN fifty articles added over fifty commits, and a git that records each time it is run
    for day in range(1, 51):
        repo.commit(f"2020-01-{day % 28 + 1:02d}T00:00:00Z", {f"articles/a{day}.md": ARTICLE})
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    real_git = next(
        Path(folder) / "git"
        for folder in os.environ["PATH"].split(os.pathsep)
        if (Path(folder) / "git").is_file()
    )
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {real_git} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")

    dates = added_dates(repo.root, ["articles"])

    assert len(dates) == 50
    assert len(calls.read_text().splitlines()) == 1
