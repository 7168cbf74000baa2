"""The worker end to end: signed push → GitHub stand-in → store (SQLite and MariaDB) → read routes."""

from __future__ import annotations

import pytest

from function.errors import PassThroughFailed
from tests.kit.answers import contract_counts
from tests.kit.blog_checks import delivery
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import delivery_uuid
from tests.kit.statements import count_statements


def seed(blog: Blog, n: int, *, publish: bool = True) -> dict[str, bytes]:
    files = {
        f"articles/post-{i:04d}.md": article(f"Post {i}", publish=publish, tags=("tech/aws",))
        for i in range(n)
    }
    files["README.md"] = b"# not an article\n"
    blog.github.set_files(files)
    return files


def test_first_push_syncs_every_article_and_serves_the_published_ones(blog: Blog) -> None:
    # GIVEN a repository with two published articles and one draft
    blog.github.set_files(
        {
            "articles/hello.md": article("Hello", tags=("tech/aws/lambda",)),
            "articles/world.md": article("World", tags=("life",)),
            "articles/draft.md": article("Draft", publish=False),
            "notes/other.md": article("Not an article"),
        }
    )
    # WHEN GitHub delivers a push
    answer = blog.push()
    # THEN all three files were processed and only the published ones are served
    assert answer.status_code == 200
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 3,
        "succeeded": 3,
        "failed": 0,
    }
    assert sorted(a["slug"] for a in blog.articles()) == ["hello", "world"]
    assert [a["slug"] for a in blog.articles(tag="tech/aws")] == ["hello"]
    one = blog.client.get("/users/alice/articles/hello").get_json()
    assert (
        one["title"] == "Hello"
        and one["contentHtml"] == "<p>Hello.</p>\n"
        and one["tags"] == ["tech/aws/lambda"]
    )
    assert blog.client.get("/users/alice/articles/draft").status_code == 404


@pytest.mark.parametrize("n", [112, 1000])
def test_push_that_changes_nothing_costs_two_github_requests_and_few_statements(blog: Blog, n: int) -> None:
    seed(blog, n)
    assert blog.push(delivery="first").get_json()["succeeded"] == n
    blog.commit({"README.md": b"# touched, no article changed\n"})
    blog.github.reset_records()

    with count_statements(blog.db) as statements:
        answer = blog.push(delivery="second")

    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": n,
        "succeeded": n,
        "failed": 0,
    }
    assert blog.github.count(exclude={"token"}) <= 2, blog.github.counts()
    assert blog.github.count("blob") == 0 and blog.github.count("tarball") == 0
    # One statement per step, on both backends: the user with the lock, the delivery's record with the
    # last sync, the index, the failures, the start record, the images' rows, the books' index and the
    # finish record. (A connection kept for the next job adds the lock's release; this one closes.)
    assert statements.count == 8, statements.statements
    assert statements.round_trips == 8, statements.statements


def test_push_that_changes_k_articles_fetches_k_blobs(blog: Blog) -> None:
    seed(blog, 30)
    blog.push(delivery="first")
    blog.commit({f"articles/post-{i:04d}.md": article(f"Changed {i}") for i in range(3)})
    blog.github.reset_records()

    answer = blog.push(delivery="second")

    assert answer.get_json()["failed"] == 0
    assert blog.github.count("blob") == 3
    titles = {a["slug"]: a["title"] for a in blog.articles()}
    assert titles["post-0000"] == "Changed 0" and titles["post-0005"] == "Post 5"


def test_vanished_file_is_archived_not_deleted_and_comes_back(blog: Blog) -> None:
    seed(blog, 3)
    blog.push(delivery="first")
    original = blog.github.files()["articles/post-0001.md"]

    blog.commit({"articles/post-0001.md": None})
    blog.push(delivery="second")
    assert "post-0001" not in [a["slug"] for a in blog.articles()]
    with blog.store() as store:
        user = store.users.get_user("alice")
        assert user is not None
        stored = store.reconcile.load_index(user.id)
    assert stored["post-0001"].archived is True  # hidden, kept

    blog.commit({"articles/post-0001.md": original})
    blog.push(delivery="third")
    assert "post-0001" in [a["slug"] for a in blog.articles()]


def test_updated_at_moves_only_on_a_real_change_and_published_at_is_kept(blog: Blog) -> None:
    blog.github.set_files({"articles/a.md": article("A")})
    blog.push(delivery="1")
    first = blog.client.get("/users/alice/articles/a").get_json()

    # Same front matter and body, different bytes (CRLF): not a real change.
    blog.commit({"articles/a.md": article("A").replace(b"\n", b"\r\n")})
    blog.push(delivery="2")
    same = blog.client.get("/users/alice/articles/a").get_json()
    assert same["updatedAt"] == first["updatedAt"]

    blog.commit({"articles/a.md": article("A", body="Edited.")})
    blog.push(delivery="3")
    edited = blog.client.get("/users/alice/articles/a").get_json()
    assert edited["updatedAt"] > first["updatedAt"]
    assert edited["publishedAt"] == first["publishedAt"]
    assert edited["createdAt"] == first["createdAt"]


def test_a_file_that_fails_to_parse_fails_alone_and_keeps_its_row(blog: Blog) -> None:
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    blog.push(delivery="1")

    blog.commit({"articles/a.md": b"---\ntitle: [unclosed\n---\nbody\n", "articles/b.md": article("B2")})
    answer = blog.push(delivery="2")

    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 1,
        "failed": 1,
    }
    titles = {a["slug"]: a["title"] for a in blog.articles()}
    assert titles == {"a": "A", "b": "B2"}  # a is left as it was, not blanked
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid("2"))
    assert record is not None and record.outcome == "partial" and "articles/a.md" in (record.error or "")


def test_badly_named_article_file_fails_with_a_message(blog: Blog) -> None:
    blog.github.set_files({"articles/ok.md": article("OK"), "articles/bad name.md": article("Bad")})
    answer = blog.push()
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 1,
        "failed": 1,
    }


def test_unknown_installation_is_a_permanent_4xx_naming_the_fix(blog: Blog) -> None:
    with blog.store() as store:
        store.users.set_installation("alice", 999)
    blog.github.set_files({"articles/a.md": article("A")})
    answer = blog.push()
    assert answer.status_code == 422
    assert answer.get_json()["error"] == "UNKNOWN_INSTALLATION"
    assert "blog-api users set-installation" in answer.get_json()["message"]


def test_async_path_processes_the_envelope_through_the_pass_through(blog: Blog) -> None:
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    result = blog.deliver_via_lambda(delivery="async-1")
    assert result["statusCode"] == 200
    assert contract_counts(result["body"]) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 2,
        "failed": 0,
    }
    assert len(blog.articles()) == 2


def test_duplicate_delivery_is_skipped_cheaply(blog: Blog) -> None:
    blog.github.set_files({"articles/a.md": article("A")})
    blog.deliver_via_lambda(delivery="dup")
    recorded = delivery(blog, "dup")
    blog.github.reset_records()
    with count_statements(blog.db) as statements:
        again = blog.deliver_via_lambda(delivery="dup")
    assert again["body"]["status"] == "skipped"
    # No GitHub request, no content, no write: the delivery's record is exactly as it was
    assert blog.github.count(exclude={"token"}) == 0
    assert delivery(blog, "dup") == recorded
    assert not [s for s in statements.statements if s.lstrip().startswith(("INSERT", "UPDATE", "DELETE"))]


def test_github_failure_on_some_blobs_raises_for_retry_and_keeps_the_rest(blog: Blog) -> None:
    # GIVEN two articles, one of whose blobs GitHub keeps answering 502
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    bad_sha = blog.github.repos["octo/blog"].commits[blog.github.head()]["articles/b.md"]
    blog.github.fail(f"/repos/octo/blog/git/blobs/{bad_sha}", 502, times=None)
    # WHEN the delivery is processed on Lambda THEN the handler raises (Lambda retries)...
    with pytest.raises(PassThroughFailed, match="503"):
        blog.deliver_via_lambda(delivery="flaky")
    # ...and the article that could be fetched is already synced
    assert [a["slug"] for a in blog.articles()] == ["a"]
    # WHEN GitHub recovers and Lambda retries the same delivery THEN only the failed blob is fetched
    blog.github.clear_faults()
    blog.github.reset_records()
    retried = blog.deliver_via_lambda(delivery="flaky")
    assert retried["body"]["succeeded"] == 2
    assert blog.github.count("blob") == 1


def test_tampered_envelope_writes_nothing(blog: Blog) -> None:
    from function.aws.dispatch import dispatch

    blog.github.set_files({"articles/a.md": article("A")})
    app = blog.lambda_app()
    envelope = {
        "kind": "github-webhook",
        "event": "push",
        "delivery": "evil",
        "signature": "sha256=" + "0" * 64,
    }
    envelope["body"] = "eyJyZWYiOiJyZWZzL2hlYWRzL21haW4ifQ=="
    result = dispatch(app, envelope, None)
    assert result["statusCode"] == 401
    with blog.store() as store:
        assert store.deliveries.get_delivery(delivery_uuid("evil")) is None
        user = store.users.get_user("alice")
        assert user is not None and store.reconcile.load_index(user.id) == {}
