"""GitHub faults through the whole path (signed push → worker → stand-in → store → read routes).

The HTTP client's and the source's own unit tests live in tests/github; these check what a user sees when
GitHub misbehaves during a real delivery: which articles are served, what the delivery record says, and
that the next delivery heals. Every test runs on SQLite and on MariaDB.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from function.errors import PassThroughFailed
from function.sources.gitsha import git_blob_sha
from tests.kit.answers import contract_counts
from tests.kit.blog_checks import (
    TREES,
    blob_path,
    delivery,
    requests_for,
    served,
    stored,
    synced_head,
)
from tests.kit.blog_fixtures import Blog, article
from tests.kit.github_standin import StandInRequest, StandInResponse, message_response

FIVE = {f"articles/post-{i}.md": article(f"Post {i}") for i in range(5)}


def test_429_with_retry_after_on_some_blobs_is_waited_for_and_the_sync_succeeds(blog: Blog) -> None:
    # GIVEN five articles, two of whose blobs GitHub answers once with 429 and Retry-After: 1
    blog.github.set_files(FIVE)
    limited = [blob_path(FIVE["articles/post-1.md"]), blob_path(FIVE["articles/post-3.md"])]
    for path in limited:
        blog.github.fail(path, 429, headers={"Retry-After": "1"}, times=1)

    # WHEN GitHub delivers the push
    started = time.monotonic()
    answer = blog.push(delivery="rate-limited")
    elapsed = time.monotonic() - started

    # THEN the client waited the second GitHub asked for, asked again, and every article synced
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 5,
        "succeeded": 5,
        "failed": 0,
    }
    assert elapsed >= 0.95, f"Retry-After was not honoured ({elapsed:.2f} s)"
    for path in limited:
        assert [r.status for r in requests_for(blog.github, path)] == [429, 200]
    assert len(served(blog)) == 5
    assert delivery(blog, "rate-limited").outcome == "success"


def test_persistent_502_on_some_blobs_fails_only_those_files_and_the_next_delivery_heals(blog: Blog) -> None:
    # GIVEN five synced articles, then a commit that edits all of them and adds a sixth
    blog.github.set_files(FIVE)
    blog.push(delivery="v1")
    v2 = {path: article(f"Edited {i}") for i, path in enumerate(sorted(FIVE))}
    v2["articles/new.md"] = article("New")
    blog.commit(dict(v2))
    # ... and GitHub answers 502 for two of the edited blobs and the new one, however often asked
    broken = ["articles/post-0.md", "articles/post-4.md", "articles/new.md"]
    for path in broken:
        blog.github.fail(blob_path(v2[path]), 502, times=None)

    # WHEN the push is delivered
    answer = blog.push(delivery="v2")

    # THEN only those three files failed: they keep their previous version (the new one does not exist
    # yet), the others are at v2, and the delivery is recorded as failed (to retry), naming each file
    assert answer.status_code == 200
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 6,
        "succeeded": 3,
        "failed": 3,
    }
    titles = {slug: a["title"] for slug, a in served(blog).items()}
    assert titles == {
        "post-0": "Post 0",
        "post-1": "Edited 1",
        "post-2": "Edited 2",
        "post-3": "Edited 3",
        "post-4": "Post 4",
    }
    record = delivery(blog, "v2")
    # "failed", not "partial": these failures may pass, so the delivery is not complete (it is retried)
    assert record.outcome == "failed" and record.failed == 3
    assert all(path in (record.error or "") for path in broken)
    for path in broken:  # retried by the client before giving up on the file
        assert len(requests_for(blog.github, blob_path(v2[path]))) >= 2

    # WHEN GitHub recovers and the next push arrives THEN everything is at v2, nothing was lost
    blog.github.clear_faults()
    healed = blog.push(delivery="next")
    assert contract_counts(healed.get_json()) == {
        "status": "processed",
        "processed": 6,
        "succeeded": 6,
        "failed": 0,
    }
    titles = {slug: a["title"] for slug, a in served(blog).items()}
    assert titles == {**{f"post-{i}": f"Edited {i}" for i in range(5)}, "new": "New"}


@pytest.fixture
def impatient_blog(make_blog: Callable[..., Blog]) -> Blog:
    """A blog whose GitHub client gives up quickly: read time-out 0.5 s, 2 attempts."""
    return make_blog(http_read_timeout=0.5, http_attempts=2)


def test_hanging_blob_times_out_and_the_delivery_answers_in_bounded_time(impatient_blog: Blog) -> None:
    blog = impatient_blog
    # GIVEN three articles, one of whose blob requests GitHub never answers
    files = {f"articles/{name}.md": article(name.upper()) for name in ("a", "b", "c")}
    blog.github.set_files(files)
    blog.github.hang(blob_path(files["articles/b.md"]), 30, times=None)

    # WHEN the push is delivered
    started = time.monotonic()
    answer = blog.push(delivery="hang")
    elapsed = time.monotonic() - started

    # THEN the worker gave up on that file within its time-outs (2 x 0.5 s read) and synced the rest
    assert elapsed < 4, f"the worker hung for {elapsed:.1f} s"
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 3,
        "succeeded": 2,
        "failed": 1,
    }
    assert sorted(served(blog)) == ["a", "c"]
    assert "articles/b.md" in (delivery(blog, "hang").error or "")


def test_hanging_tree_listing_answers_503_in_bounded_time_and_writes_nothing(impatient_blog: Blog) -> None:
    blog = impatient_blog
    # GIVEN a synced article, then a new commit whose tree listing GitHub never answers
    blog.github.set_files({"articles/a.md": article("A")})
    blog.push(delivery="first")
    head_before = synced_head(blog)
    blog.commit({"articles/a.md": article("A2"), "articles/b.md": article("B")})
    blog.github.hang(TREES, 30, times=None)

    # WHEN the delivery runs on Lambda
    started = time.monotonic()
    with pytest.raises(PassThroughFailed, match="503"):
        blog.deliver_via_lambda(delivery="hang-tree")
    elapsed = time.monotonic() - started

    # THEN the handler raised (Lambda retries) within bounded time and nothing changed
    assert elapsed < 4, f"the worker hung for {elapsed:.1f} s"
    assert {slug: a["title"] for slug, a in served(blog).items()} == {"a": "A"}
    assert synced_head(blog) == head_before
    assert delivery(blog, "hang-tree").outcome == "failed"


def test_truncated_tree_listing_archives_nothing_and_the_next_complete_one_does(blog: Blog) -> None:
    # GIVEN five synced articles, then a commit that deletes two of them
    blog.github.set_files(FIVE)
    blog.push(delivery="first")
    blog.commit({"articles/post-1.md": None, "articles/post-3.md": None})
    # ... and GitHub's tree listing is truncated after two entries (the folder and one file)
    blog.github.truncate_tree(2)

    # WHEN the push is delivered
    answer = blog.push(delivery="truncated")

    # THEN nothing is archived: neither the deleted files nor the ones missing from the listing
    assert answer.status_code == 200
    assert len(served(blog)) == 5
    assert not any(s.archived for s in stored(blog).values())

    # WHEN the listing is complete again THEN exactly the deleted articles are archived (kept, hidden)
    blog.github.truncate_tree(None)
    blog.push(delivery="complete")
    assert sorted(served(blog)) == ["post-0", "post-2", "post-4"]
    assert sorted(slug for slug, s in stored(blog).items() if s.archived) == ["post-1", "post-3"]


def test_blob_that_is_not_utf8_fails_alone_with_a_message(blog: Blog) -> None:
    # GIVEN a synced article that is then replaced by bytes that are not UTF-8, next to a good edit
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    blog.push(delivery="first")
    blog.commit({"articles/a.md": b"---\ntitle: Latin-1\n---\ncaf\xe9\n", "articles/b.md": article("B2")})

    # WHEN the push is delivered
    answer = blog.push(delivery="latin1")

    # THEN that file fails with a message naming the problem, keeps its previous version; b is synced
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 1,
        "failed": 1,
    }
    assert {slug: a["title"] for slug, a in served(blog).items()} == {"a": "A", "b": "B2"}
    error = delivery(blog, "latin1").error or ""
    assert "articles/a.md" in error and "not valid UTF-8" in error


def test_five_megabyte_file_fails_with_a_size_message_and_nothing_else_is_affected(blog: Blog) -> None:
    # GIVEN three synced articles; one of them grows to 5 MB while another is edited
    files = {f"articles/{n}.md": article(n.upper()) for n in ("a", "b", "c")}
    blog.github.set_files(files)
    blog.push(delivery="first")
    before = stored(blog)
    huge = article("Huge", body="x" * (5 * 1024 * 1024))
    blog.commit({"articles/b.md": huge, "articles/c.md": article("C2")})

    # WHEN the push is delivered
    answer = blog.push(delivery="huge")

    # THEN the big file fails with its size, without being downloaded; its row is untouched; the others
    # are in sync
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 3,
        "succeeded": 2,
        "failed": 1,
    }
    error = delivery(blog, "huge").error or ""
    assert "articles/b.md" in error and f"{len(huge)} bytes, over the 1048576-byte limit" in error
    assert not [r for r in blog.github.requests if r.path.endswith(git_blob_sha(huge))]
    after = stored(blog)
    assert after["b"] == before["b"]
    assert after["a"] == before["a"]
    assert {slug: a["title"] for slug, a in served(blog).items()} == {"a": "A", "b": "B", "c": "C2"}


def test_token_revoked_mid_run_is_renewed_and_the_sync_succeeds(blog: Blog) -> None:
    # GIVEN three articles, and GitHub revoking every installation token while the worker fetches the
    # first blob (after the token served the tree listing): that request is answered 401
    files = {f"articles/{n}.md": article(n.upper()) for n in ("a", "b", "c")}
    blog.github.set_files(files)
    revoked: list[bool] = []

    def revoke_once(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        if not revoked:
            revoked.append(True)
            blog.github.revoke_tokens()
            return message_response(401, "Bad credentials")
        return StandInResponse(200, files["articles/a.md"], {"Content-Type": "application/vnd.github.raw"})

    first_blob = blob_path(files["articles/a.md"])
    blog.github.add_route("GET", re.escape(first_blob), revoke_once, kind="blob", auth="token")

    # WHEN the push is delivered
    answer = blog.push(delivery="revoked")

    # THEN the source asked for a new token, fetched the blob again, and every article synced
    assert revoked
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 3,
        "succeeded": 3,
        "failed": 0,
    }
    assert [r.status for r in requests_for(blog.github, first_blob)] == [401, 200]
    assert blog.github.count("token") == 2
    assert len(served(blog)) == 3
    assert delivery(blog, "revoked").outcome == "success"


def test_tree_listing_5xx_answers_503_and_writes_nothing(blog: Blog) -> None:
    # GIVEN a synced article, then a commit, and GitHub answering 502 for every tree listing
    blog.github.set_files({"articles/a.md": article("A")})
    blog.push(delivery="first")
    before, head_before = stored(blog), synced_head(blog)
    blog.commit({"articles/a.md": article("A2"), "articles/b.md": article("B")})
    blog.github.fail(TREES, 502, times=None)
    blog.github.reset_records()

    # WHEN the push is delivered (inline mode answers GitHub directly)
    answer = blog.push(delivery="tree-502")

    # THEN GitHub gets 503 (a failure it shows for redelivery) and no article was touched
    assert answer.status_code == 503
    assert answer.get_json()["error"] == "UNAVAILABLE"
    assert stored(blog) == before and synced_head(blog) == head_before
    assert blog.github.count("blob") == 0
    assert delivery(blog, "tree-502").outcome == "failed"
