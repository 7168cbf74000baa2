"""Replays cost nothing: one signed push captured and sent again under fresh X-GitHub-Delivery ids
(GitHub does not sign that header) is answered done without a GitHub request, one at a time or all at
once, and a new push still syncs."""

from __future__ import annotations

import threading
from typing import Any

from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import github_headers

REPLAYS = 20


def _post(blog: Blog, body: bytes, delivery: str) -> Any:
    return blog.client.post("/webhooks/github", data=body, headers=github_headers(body, delivery=delivery))


def test_one_signed_push_replayed_20_times_under_fresh_ids_makes_no_github_request(blog: Blog) -> None:
    # GIVEN a push that was delivered and synced
    blog.commit({"articles/a.md": article("A"), "articles/b.md": article("B")})
    body = blog.push_body()
    assert _post(blog, body, "original").get_json()["status"] == "processed"
    blog.github.reset_records()

    # WHEN the same signed bytes come back 20 times, each under a new delivery id
    answers = [_post(blog, body, f"replay-{n}") for n in range(REPLAYS)]

    # THEN each is answered done, and GitHub was not asked anything (not even for a token)
    assert {a.status_code for a in answers} == {200}
    assert all(a.get_json() == {"status": "skipped", "reason": "head already synced"} for a in answers)
    assert blog.github.count() == 0
    assert sorted(a["slug"] for a in blog.articles()) == ["a", "b"]


def test_concurrent_replays_coalesce_behind_one_sync(blog: Blog) -> None:
    # GIVEN a push nobody has synced yet, sent 20 times at once under fresh ids
    blog.commit({"articles/a.md": article("A")})
    body = blog.push_body()
    blog.github.reset_records()
    answers: list[Any] = []
    threads = [
        threading.Thread(target=lambda n=n: answers.append(_post(blog, body, f"burst-{n}")))
        for n in range(REPLAYS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    # THEN one of them synced and the others ended as soon as they held the lock
    statuses = sorted(a.get_json()["status"] for a in answers)
    assert statuses == ["processed"] + ["skipped"] * (REPLAYS - 1)
    assert blog.github.count("tree") == 1 and blog.github.count("blob") == 1


def test_a_new_head_after_a_replayed_one_still_syncs(blog: Blog) -> None:
    blog.commit({"articles/a.md": article("A")})
    old = blog.push_body()
    assert _post(blog, old, "first").get_json()["status"] == "processed"
    assert _post(blog, old, "replay").get_json()["status"] == "skipped"

    blog.commit({"articles/a.md": article("A2")})
    answer = _post(blog, blog.push_body(), "second").get_json()

    assert answer["status"] == "processed"
    assert [a["title"] for a in blog.articles()] == ["A2"]
