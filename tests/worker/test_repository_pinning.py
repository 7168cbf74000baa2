"""The blog follows one repository: an App installed on "All repositories" receives every repository's
pushes, and a push from any other one must change nothing."""

from __future__ import annotations

import json
from typing import Any

from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.deliveries import delivery_uuid, github_headers, push_payload
from tests.kit.github_fixtures import INSTALLATION_ID, REPO

BLOG_ID = 186853002  # the repository id in the recorded push (tests/fixtures/github/push)
OTHER = "octo/dotfiles"
OTHER_ID = 99000001


def push_from(blog: Blog, repo: str, repo_id: int, delivery: str) -> Any:
    payload = push_payload(
        installation_id=INSTALLATION_ID, repo=repo, repo_id=repo_id, after=blog.github.head(repo=repo)
    )
    body = json.dumps(payload).encode()
    return blog.client.post("/webhooks/github", data=body, headers=github_headers(body, delivery=delivery))


def followed(blog: Blog) -> tuple[str | None, int | None]:
    with blog.store() as store:
        user = store.users.get_user(USER)
    assert user is not None
    return user.repository, user.repository_id


def recorded(blog: Blog, delivery: str) -> Any:
    with blog.store() as store:
        [found] = [d for d in store.deliveries.recent_deliveries(20) if d.delivery_id == delivery]
    return found


def test_a_push_from_another_repository_of_the_installation_changes_nothing(blog: Blog) -> None:
    # GIVEN alice's blog synced from her repository, and a second repository in the same installation
    # that lacks her articles and has a file with the same slug as one of them
    blog.commit({"articles/hello.md": article("Hello"), "articles/second.md": article("Second")})
    assert push_from(blog, REPO, BLOG_ID, "d-1").get_json()["status"] == "processed"
    blog.github.add_repo(OTHER)
    blog.github.set_files({"articles/hello.md": article("pwned")}, repo=OTHER)
    blog.github.reset_records()

    answer = push_from(blog, OTHER, OTHER_ID, "d-2")

    assert answer.status_code == 200
    assert answer.get_json() == {"status": "skipped", "reason": "other repository"}
    assert sorted(a["title"] for a in blog.articles()) == ["Hello", "Second"]
    assert followed(blog) == (REPO, BLOG_ID)
    assert [r.path for r in blog.github.requests if OTHER in r.path] == []  # not even read
    skipped = recorded(blog, delivery_uuid("d-2"))
    assert skipped.outcome == "skipped" and OTHER in skipped.error


def test_a_repository_with_the_same_name_but_another_id_is_another_repository(blog: Blog) -> None:
    # GIVEN the id of alice's repository is pinned by its first push
    blog.commit({"articles/hello.md": article("Hello")})
    push_from(blog, REPO, BLOG_ID, "d-1")
    # WHEN the repository is deleted and one of the same name (without her articles) pushes
    blog.commit({"articles/hello.md": None})

    answer = push_from(blog, REPO, BLOG_ID + 1, "d-2")

    assert answer.get_json()["reason"] == "other repository"
    assert [a["title"] for a in blog.articles()] == ["Hello"]


def test_a_push_for_a_user_who_named_no_repository_pins_nothing(blog: Blog) -> None:
    # GIVEN a user added without --repository, on an App that sees every repository of the account
    with blog.store() as store:
        store.users.set_repository(USER, None)
    blog.github.add_repo(OTHER)
    blog.github.set_files({"articles/hello.md": article("pwned")}, repo=OTHER)
    # WHEN any repository pushes first
    answer = push_from(blog, OTHER, OTHER_ID, "d-1").get_json()
    # THEN it is skipped, saying how to name the repository, and becomes nobody's blog
    assert answer["reason"] == "other repository"
    assert "users set-repository" in recorded(blog, delivery_uuid("d-1")).error
    assert followed(blog) == (None, None)
    assert blog.articles() == []
    # and once the repository is named, its pushes sync
    with blog.store() as store:
        store.users.set_repository(USER, REPO)
    blog.commit({"articles/hello.md": article("Hello")})
    assert push_from(blog, REPO, BLOG_ID, "d-2").get_json()["status"] == "processed"
    assert followed(blog) == (REPO, BLOG_ID)
    assert [a["title"] for a in blog.articles()] == ["Hello"]


def test_set_repository_moves_the_blog_to_another_repository(blog: Blog) -> None:
    blog.commit({"articles/hello.md": article("Hello")})
    push_from(blog, REPO, BLOG_ID, "d-1")
    blog.github.add_repo(OTHER)
    blog.github.set_files({"articles/moved.md": article("Moved")}, repo=OTHER)

    with blog.store() as store:
        store.users.set_repository(USER, OTHER)
    assert push_from(blog, REPO, BLOG_ID, "d-2").get_json()["reason"] == "other repository"
    assert push_from(blog, OTHER, OTHER_ID, "d-3").get_json()["status"] == "processed"

    assert followed(blog) == (OTHER, OTHER_ID)
    assert [a["title"] for a in blog.articles()] == ["Moved"]


def test_a_push_through_lambda_mode_is_matched_by_id_too(blog: Blog) -> None:
    from function.aws.dispatch import dispatch

    blog.commit({"articles/hello.md": article("Hello")})
    push_from(blog, REPO, BLOG_ID, "d-1")
    blog.github.add_repo(OTHER)
    blog.github.set_files({"articles/hello.md": article("pwned")}, repo=OTHER)
    app = blog.lambda_app()
    payload = push_payload(
        installation_id=INSTALLATION_ID, repo=OTHER, repo_id=OTHER_ID, after=blog.github.head(repo=OTHER)
    )
    body = json.dumps(payload).encode()
    assert (
        app.test_client()
        .post("/webhooks/github", data=body, headers=github_headers(body, delivery="d-2"))
        .status_code
        == 202
    )

    result = dispatch(app, json.loads(blog.invoker.payloads[-1]), None)

    assert result["body"] == {"status": "skipped", "reason": "other repository"}
    assert [a["title"] for a in blog.articles()] == ["Hello"]
