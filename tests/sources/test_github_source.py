"""The GitHub article source against the stand-in: request counts, verified content, per-file failures."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable

import pytest

from function.errors import SourcePermanentError, SourceUnavailable
from function.sources.gitsha import git_blob_sha
from function.sources.port import FetchedFile, FetchFailure, RepoFile, RepoRef, Snapshot
from tests.kit.github_fixtures import REPO, GitHubClientParts
from tests.kit.github_standin import GitHubStandIn

MakeSource = Callable[..., GitHubClientParts]
MAIN = RepoRef(full_name=REPO, branch="main", installation_id=1)


def article(slug: str, body: str = "") -> tuple[str, bytes]:
    return f"articles/{slug}.md", f"---\ntitle: {slug}\n---\n{body or slug}\n".encode()


def articles(n: int) -> dict[str, bytes]:
    return dict(article(f"post-{i:04d}") for i in range(n))


def by_path(results: list[FetchedFile | FetchFailure]) -> dict[str, FetchedFile | FetchFailure]:
    return {r.path: r for r in results}


def test_snapshot_lists_only_direct_article_markdown_files(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(
        {
            "articles/a.md": b"a",
            "articles/b.md": b"b",
            "articles/notes.txt": b"x",
            "articles/drafts/c.md": b"c",
            "README.md": b"r",
            "other/d.md": b"d",
        }
    )

    snapshot = make_github_source().source.snapshot(MAIN)

    assert [f.path for f in snapshot.files] == ["articles/a.md", "articles/b.md"]
    assert snapshot.files[0].sha == git_blob_sha(b"a")
    assert snapshot.head_sha == github.head()
    assert snapshot.complete


def test_snapshot_of_an_unchanged_repository_costs_two_requests_after_the_token(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN a synced repository of 112 articles and a push that changed nothing
    github.set_files(articles(112))
    source = make_github_source().source
    source.snapshot(MAIN)
    github.set_files(articles(112))
    github.reset_records()

    # WHEN the worker reads the snapshot again
    snapshot = source.snapshot(MAIN)

    # THEN exactly the head SHA and one tree listing were requested (the token is cached)
    assert len(snapshot.files) == 112
    assert github.counts() == {"commit": 1, "tree": 1}
    commit_request = github.requests[0]
    assert commit_request.headers["accept"] == "application/vnd.github.sha"
    assert github.requests[1].query == {"recursive": "1"}


def test_snapshot_of_the_pushed_head_reads_head_and_listing_at_once(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN a push whose reported head is still the branch head, and a stand-in that takes 200 ms a request
    github.set_files(articles(3))
    source = make_github_source().source
    source.snapshot(MAIN)  # the token is cached
    github.reset_records()
    github.latency = 0.2

    # WHEN the worker reads the snapshot with the pushed head
    started = time.monotonic()
    snapshot = source.snapshot(RepoRef(REPO, "main", 1, pushed_head=github.head()))
    elapsed = time.monotonic() - started

    # THEN still the head and one listing, but in one round trip's time instead of two
    assert snapshot.head_sha == github.head() and len(snapshot.files) == 3
    assert github.counts() == {"commit": 1, "tree": 1}
    assert elapsed < 0.35, elapsed


def test_snapshot_of_an_outdated_pushed_head_lists_the_current_head(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN a push at one head, and a newer commit on the branch before the worker reads it
    github.set_files(articles(3))
    pushed = github.head()
    github.update_files(dict([article("newer")]))

    # WHEN the worker reads the snapshot with the outdated pushed head
    snapshot = make_github_source().source.snapshot(RepoRef(REPO, "main", 1, pushed_head=pushed))

    # THEN the listing is the current head's: never older than the branch
    assert snapshot.head_sha == github.head() != pushed
    assert "articles/newer.md" in [f.path for f in snapshot.files]
    assert github.count("tree") == 2


def test_snapshot_without_branch_reads_the_default_branch_first(
    github: GitHubStandIn, make_github_source: MakeSource, github_repo: RepoRef
) -> None:
    github.add_repo(REPO, default_branch="trunk")
    github.set_files({"articles/a.md": b"a"}, branch="trunk")
    github.set_files({"articles/other.md": b"o"}, branch="main")

    snapshot = make_github_source().source.snapshot(github_repo)

    assert [f.path for f in snapshot.files] == ["articles/a.md"]
    assert github.count(exclude=["token"]) == 3


def test_snapshot_reads_the_named_branch(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    github.set_files({"articles/main.md": b"m"})
    github.set_files({"articles/feature.md": b"f"}, branch="feature/x")

    snapshot = make_github_source().source.snapshot(RepoRef(REPO, "feature/x", 1))

    assert [f.path for f in snapshot.files] == ["articles/feature.md"]


def test_snapshot_honours_another_articles_dir(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    github.set_files({"posts/a.md": b"a", "articles/b.md": b"b"})

    snapshot = make_github_source(articles_dir="posts").source.snapshot(MAIN)

    assert [f.path for f in snapshot.files] == ["posts/a.md"]


def test_truncated_tree_gives_an_incomplete_snapshot(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(20))
    github.truncate_tree(5)

    snapshot = make_github_source().source.snapshot(MAIN)

    assert snapshot.complete is False
    assert len(snapshot.files) < 20


def test_snapshot_with_github_down_raises_source_unavailable(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(3))
    github.fail(re.compile(r"/repos/.*/git/trees/.*"), 502, times=None)

    with pytest.raises(SourceUnavailable):
        make_github_source().source.snapshot(MAIN)


def test_snapshot_of_a_missing_branch_is_permanent(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(3))

    with pytest.raises(SourcePermanentError):
        make_github_source().source.snapshot(RepoRef(REPO, "gone", 1))


def test_snapshot_of_a_missing_repository_is_permanent(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    with pytest.raises(SourcePermanentError):
        make_github_source().source.snapshot(RepoRef("octo/nothing", "main", 1))


def test_a_repository_name_with_a_trailing_newline_is_no_repository_name(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(1))
    # "$" matches before a final newline: the name is matched whole, and nothing is requested for it.
    with pytest.raises(SourcePermanentError, match="not a repository name"):
        make_github_source().source.snapshot(RepoRef(REPO + "\n", "main", 1))


def test_a_pushed_head_with_a_trailing_newline_is_not_taken_for_a_commit(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(1))
    head = github.head(repo=REPO)
    parts = make_github_source()
    # The pushed head is only a hint: one that is not exactly a SHA is never requested as a commit.
    snapshot = parts.source.snapshot(RepoRef(REPO, "main", 1, pushed_head=head + "\n"))
    assert snapshot.head_sha == head
    assert not [r for r in github.requests if "\n" in r.path or "%0A" in r.path.upper()]


def test_revoked_token_is_renewed_once(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    github.set_files(articles(2))
    source = make_github_source().source
    source.snapshot(MAIN)
    github.revoke_tokens()

    snapshot = source.snapshot(MAIN)

    assert len(snapshot.files) == 2
    assert github.count("token") == 2


def changed_snapshot(
    github: GitHubStandIn, parts: GitHubClientParts, n: int, changed: int
) -> tuple[Snapshot, list[RepoFile]]:
    """A repository of ``n`` articles synced once, then a push changing ``changed`` of them: returns the
    new snapshot and the files whose SHA differs from before."""
    github.set_files(articles(n))
    before = {f.path: f.sha for f in parts.source.snapshot(MAIN).files}
    github.update_files(dict(article(f"post-{i:04d}", f"edited {i}") for i in range(changed)))
    snapshot = parts.source.snapshot(MAIN)
    github.reset_records()
    return snapshot, [f for f in snapshot.files if before.get(f.path) != f.sha]


def test_k_changed_files_cost_k_blob_requests(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    # GIVEN 112 articles of which 3 changed
    parts = make_github_source()
    snapshot, changed = changed_snapshot(github, parts, n=112, changed=3)

    # WHEN the changed ones are fetched
    results = parts.source.fetch(MAIN, snapshot, changed)

    # THEN three blob requests brought the new contents
    assert len(changed) == 3
    assert github.counts() == {"blob": 3}
    assert all(isinstance(r, FetchedFile) for r in results)
    edited = by_path(results)["articles/post-0001.md"]
    assert isinstance(edited, FetchedFile)
    assert edited.content == github.files()["articles/post-0001.md"]


def test_blob_requests_ask_for_the_raw_media_type_with_bounded_concurrency(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.latency = 0.05
    parts = make_github_source(max_workers=4)
    snapshot, changed = changed_snapshot(github, parts, n=40, changed=20)

    parts.source.fetch(MAIN, snapshot, changed)

    assert github.count("blob") == 20
    assert 2 <= github.max_in_flight <= 4
    assert {r.headers["accept"] for r in github.requests} == {"application/vnd.github.raw"}


def test_first_sync_of_many_files_uses_one_tarball_request(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN 120 articles never synced
    github.set_files({**articles(120), "README.md": b"readme", "articles/img/x.md": b"nested"})
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    github.reset_records()

    # WHEN all of them are fetched
    results = source.fetch(MAIN, snapshot, snapshot.files)

    # THEN one tarball request (and its redirect target) delivered every file intact
    assert github.counts() == {"tarball": 1, "codeload": 1}
    expected = github.files()
    assert len(results) == 120
    for result in results:
        assert isinstance(result, FetchedFile)
        assert result.content == expected[result.path]
    assert "authorization" in github.requests[0].headers  # the API call is authenticated


def test_a_tarballs_files_are_given_as_it_downloads(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN 200 articles whose tarball download stops halfway until released
    bodies = {path: content + secrets.token_hex(2000).encode() for path, content in articles(200).items()}
    github.set_files(bodies)
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    hold = github.hold_tarball(0.5)

    # WHEN the files are streamed
    stream = source.fetch_stream(MAIN, snapshot, snapshot.files)
    first = next(stream)

    # THEN the first file came while the rest of the download was still held back
    assert not hold.rest_sent.is_set()
    hold.release.set()
    results = [first, *stream]
    # and every file came once, intact, from that one download, in its (the listing's) order
    assert github.count("codeload") == 1 and github.count("blob") == 0
    assert [r.path for r in results] == [f.path for f in snapshot.files]
    assert all(isinstance(r, FetchedFile) and r.content == bodies[r.path] for r in results)


def test_fetch_answers_in_the_order_asked_whatever_the_tarballs_order(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(80))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    asked = list(reversed(snapshot.files))

    results = source.fetch(MAIN, snapshot, asked)

    assert [r.path for r in results] == [f.path for f in asked]
    assert github.count("tarball") == 1


def test_tarball_redirect_to_another_host_carries_no_token(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.codeload_base = f"http://localhost:{github.port}"
    github.set_files(articles(60))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    github.reset_records()

    results = source.fetch(MAIN, snapshot, snapshot.files)

    assert all(isinstance(r, FetchedFile) for r in results)
    codeload = [r for r in github.requests if r.kind == "codeload"]
    assert len(codeload) == 1
    assert "authorization" not in codeload[0].headers


def test_tarball_failure_falls_back_to_blobs(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    github.set_files(articles(60))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    github.fail(re.compile(r"/_codeload/.*"), 500, times=None)
    github.reset_records()

    results = source.fetch(MAIN, snapshot, snapshot.files)

    assert all(isinstance(r, FetchedFile) for r in results)
    assert github.count("blob") == 60


def test_tarball_entry_with_wrong_content_is_fetched_again_as_a_blob(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN a tarball in which one file's bytes do not match its SHA in the tree
    github.set_files(articles(60))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    bad = snapshot.files[7]
    github.corrupt_blob(bad.sha, b"tampered")
    github.reset_records()

    # WHEN everything is fetched
    results = by_path(source.fetch(MAIN, snapshot, snapshot.files))

    # THEN only that file went by blob (which is corrupt too, so it fails alone)
    assert github.count("blob") == 1
    assert isinstance(results[bad.path], FetchFailure)
    assert sum(isinstance(r, FetchedFile) for r in results.values()) == 59


def test_a_few_files_of_a_small_repository_never_use_the_tarball(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(10))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    github.reset_records()

    source.fetch(MAIN, snapshot, snapshot.files)

    assert github.counts() == {"blob": 10}


def test_502_then_200_on_a_blob_is_retried(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    parts = make_github_source()
    snapshot, changed = changed_snapshot(github, parts, n=5, changed=1)
    github.fail(f"/repos/{REPO}/git/blobs/{changed[0].sha}", 502)

    [result] = parts.source.fetch(MAIN, snapshot, changed)

    assert isinstance(result, FetchedFile)
    assert github.count("blob") == 2


def test_persistent_502_on_one_blob_fails_that_file_only_as_retryable(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN 5 changed files, one of whose blob always answers 502
    parts = make_github_source()
    snapshot, changed = changed_snapshot(github, parts, n=20, changed=5)
    broken = changed[2]
    github.fail(f"/repos/{REPO}/git/blobs/{broken.sha}", 502, times=None)

    # WHEN they are fetched
    results = by_path(parts.source.fetch(MAIN, snapshot, changed))

    # THEN that file is a retryable failure and the four others arrived
    failure = results[broken.path]
    assert isinstance(failure, FetchFailure)
    assert failure.retryable is True
    assert "502" in failure.message
    assert sum(isinstance(r, FetchedFile) for r in results.values()) == 4


def test_429_with_retry_after_on_a_blob_is_waited_for(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    parts = make_github_source()
    snapshot, changed = changed_snapshot(github, parts, n=5, changed=1)
    github.fail(f"/repos/{REPO}/git/blobs/{changed[0].sha}", 429, headers={"Retry-After": "1"})

    started = time.monotonic()
    [result] = parts.source.fetch(MAIN, snapshot, changed)

    assert isinstance(result, FetchedFile)
    assert time.monotonic() - started >= 0.9


def test_missing_blob_is_a_permanent_failure(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    github.set_files(articles(2))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    ghost = RepoFile("articles/ghost.md", git_blob_sha(b"never committed"))

    [result] = source.fetch(MAIN, snapshot, [ghost])

    assert isinstance(result, FetchFailure)
    assert result.retryable is False


def test_blob_whose_content_does_not_match_its_sha_is_a_permanent_failure(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    parts = make_github_source()
    snapshot, changed = changed_snapshot(github, parts, n=3, changed=1)
    github.corrupt_blob(changed[0].sha, b"not what the tree said")

    [result] = parts.source.fetch(MAIN, snapshot, changed)

    assert isinstance(result, FetchFailure)
    assert result.retryable is False
    assert "does not match" in result.message


def test_hung_blob_times_out_as_a_retryable_failure_without_hanging(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    # GIVEN one blob whose request never gets an answer, a 0.3 s read time-out and 2 attempts
    parts = make_github_source(http_options={"read_timeout": 0.3, "attempts": 2})
    snapshot, changed = changed_snapshot(github, parts, n=6, changed=3)
    github.hang(f"/repos/{REPO}/git/blobs/{changed[0].sha}", 30, times=None)

    # WHEN the files are fetched
    started = time.monotonic()
    results = by_path(parts.source.fetch(MAIN, snapshot, changed))
    elapsed = time.monotonic() - started

    # THEN the hung one failed (retryable) after about two time-outs, the others arrived
    assert elapsed < 0.3 * 2 + 1.0
    hung = results[changed[0].path]
    assert isinstance(hung, FetchFailure) and hung.retryable
    assert sum(isinstance(r, FetchedFile) for r in results.values()) == 2


def test_non_utf8_blob_is_fetched_as_bytes(github: GitHubStandIn, make_github_source: MakeSource) -> None:
    latin1 = "---\ntitle: café\n---\nnaïve\n".encode("latin-1")
    github.set_files({"articles/latin.md": latin1})
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)

    [result] = source.fetch(MAIN, snapshot, snapshot.files)

    assert isinstance(result, FetchedFile)
    assert result.content == latin1


def test_a_file_listed_over_the_limit_fails_with_its_size_and_is_never_downloaded(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    big = b"---\ntitle: big\n---\n" + b"0123456789abcdef" * (5 * 1024 * 1024 // 16)
    github.set_files({"articles/big.md": big, "articles/small.md": b"small"})
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    github.reset_records()

    results = by_path(source.fetch(MAIN, snapshot, snapshot.files))

    failed = results["articles/big.md"]
    assert isinstance(failed, FetchFailure) and not failed.retryable
    assert f"{len(big)} bytes" in failed.message and "1048576-byte limit" in failed.message
    assert isinstance(results["articles/small.md"], FetchedFile)
    assert github.count("blob") == 1  # the small one only


def test_files_with_identical_content_share_one_blob_request(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files({"articles/a.md": b"same", "articles/b.md": b"same"})
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    github.reset_records()

    results = source.fetch(MAIN, snapshot, snapshot.files)

    assert [r.path for r in results] == ["articles/a.md", "articles/b.md"]
    assert all(isinstance(r, FetchedFile) and r.content == b"same" for r in results)
    assert github.count("blob") == 1


def test_fetch_without_installation_fails_every_file_without_raising(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(articles(2))
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)

    results = source.fetch(RepoRef(REPO, "main", None), snapshot, snapshot.files)

    assert all(isinstance(r, FetchFailure) and not r.retryable for r in results)
