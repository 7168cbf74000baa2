"""Deliveries that run at once or out of order: the newest branch head wins, and the same delivery
processed twice at once writes once. Lambda's asynchronous invocation is at-least-once and GitHub may
send two pushes within milliseconds, so both happen in production."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from function.aws.dispatch import dispatch
from tests.kit.blog_checks import delivery, gate_blob, served, stored, synced_head, table_rows
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import github_headers, push_payload
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.kit.statements import count_statements

OLD = article("Old title", body="Old body.")
NEW = article("New title", body="New body.")


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(target())
        except BaseException as exc:  # handed back to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def queue(blog: Blog, delivery_id: str, after: str) -> dict[str, Any]:
    """Accept a push for head ``after`` in Lambda mode; the event Lambda would run."""
    body = json.dumps(push_payload(installation_id=INSTALLATION_ID, repo=REPO, after=after)).encode()
    answer = (
        blog.lambda_app()
        .test_client()
        .post("/webhooks/github", data=body, headers=github_headers(body, delivery=delivery_id))
    )
    assert answer.status_code == 202
    event: dict[str, Any] = json.loads(blog.invoker.payloads[-1])
    return event


def test_two_heads_at_once_with_the_older_finishing_last_leave_the_newest_head(blog: Blog) -> None:
    # GIVEN a push of head 1 whose worker is slowed down while fetching its blob
    head1 = blog.github.set_files({"articles/a.md": OLD, "articles/keep.md": article("Keep")})
    gate = gate_blob(blog.github, OLD)
    older_event = queue(blog, "older", head1)
    older, older_out = in_thread(lambda: dispatch(blog.lambda_app(), older_event, None))
    assert gate.reached.wait(10), "the older delivery never fetched its blob"

    # WHEN head 2 is pushed meanwhile and its delivery runs at once, and only afterwards the older
    # delivery's slow fetch completes (so, without the per-user lock, it would finish last)
    head2 = blog.commit({"articles/a.md": NEW})
    newer_event = queue(blog, "newer", head2)
    newer, newer_out = in_thread(lambda: dispatch(blog.lambda_app(), newer_event, None))
    newer.join(1.0)
    gate.open()
    older.join(20)
    newer.join(20)

    # THEN both succeeded, and the database is at head 2: the newest content is served
    assert older_out[0]["statusCode"] == 200 and newer_out[0]["statusCode"] == 200
    assert served(blog)["a"]["title"] == "New title"
    assert blog.article("a")["content"] == "New body."
    assert synced_head(blog) == head2
    assert delivery(blog, "newer").head_sha == head2


def test_older_delivery_arriving_after_the_newer_one_changes_nothing(blog: Blog) -> None:
    # GIVEN head 2 already synced
    head1 = blog.github.set_files({"articles/a.md": OLD})
    blog.push(delivery="older-first-try")
    old_event = queue(blog, "older", head1)
    head2 = blog.commit({"articles/a.md": NEW})
    blog.push(delivery="newer")
    after_newer = stored(blog)

    # WHEN Lambda's retry of the older delivery (head 1) arrives late
    blog.github.reset_records()
    result = dispatch(blog.lambda_app(), old_event, None)

    # THEN the worker read the current head, found nothing to do and rolled nothing back
    assert result["statusCode"] == 200
    assert stored(blog) == after_newer
    assert served(blog)["a"]["title"] == "New title"
    assert synced_head(blog) == head2
    assert blog.github.count("blob") == 0


def test_same_delivery_twice_at_once_writes_once(blog: Blog) -> None:
    # GIVEN one queued delivery of three articles, which Lambda runs twice at the same time
    # (at-least-once delivery); the first run is held while fetching a blob
    blog.github.set_files(
        {"articles/a.md": OLD, "articles/b.md": article("B"), "articles/c.md": article("C")}
    )
    gate = gate_blob(blog.github, OLD)
    event = queue(blog, "twice", blog.github.head())

    with count_statements(blog.db) as statements:
        first, first_out = in_thread(lambda: dispatch(blog.lambda_app(), event, None))
        assert gate.reached.wait(10)
        second, second_out = in_thread(lambda: dispatch(blog.lambda_app(), event, None))
        second.join(1.0)
        gate.open()
        first.join(20)
        second.join(20)

    # THEN one run processed it and the other found it done: one set of writes
    bodies = sorted([first_out[0]["body"], second_out[0]["body"]], key=lambda b: b["status"])
    assert bodies == [
        {
            "status": "processed",
            "processed": 3,
            "succeeded": 3,
            "failed": 0,
            "written": 3,
            "archived": 0,
            "unchanged": 0,
            "failedPaths": [],
        },
        {"status": "skipped", "reason": "delivery already processed"},
    ]
    assert (
        len(statements.matching('INSERT INTO "articles"') + statements.matching("INSERT INTO `articles`"))
        == 1
    )
    assert table_rows(blog, "articles") == 3
    assert blog.github.count("blob") == 3
    record = delivery(blog, "twice")
    assert record.attempts == 1 and record.outcome == "success"
    updated = {slug: s.updated_at for slug, s in stored(blog).items()}
    assert len(set(updated.values())) == 1
