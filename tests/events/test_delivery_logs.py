"""Every delivery logs "Received GitHub webhook" and, when it is done, exactly one
"Webhook processing complete" with delivery, duration_ms, processed, succeeded and failed — whatever
became of it (processed, skipped, refused, failed, or handed to the worker through the self-invoke)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from function.aws.dispatch import dispatch
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import delivery_uuid, github_headers, push_payload

RECEIVED = "Received GitHub webhook"
COMPLETE = "Webhook processing complete"
CONTRACT_FIELDS = ("delivery", "duration_ms", "processed", "succeeded", "failed")


def lines_for(captured: str, delivery: str) -> list[dict[str, Any]]:
    """The JSON log lines about ``delivery``, in order."""
    found = []
    for line in captured.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record.get("delivery") == delivery:
                found.append(record)
    return found


def of(records: list[dict[str, Any]], message: str) -> list[dict[str, Any]]:
    return [r for r in records if r["message"] == message]


def test_a_processed_push_logs_received_then_one_completion_with_its_counts(
    blog: Blog, capsys: pytest.CaptureFixture[str]
) -> None:
    blog.commit({"articles/a.md": article("A"), "articles/b.md": article("B")})
    app = blog.app  # logging is configured when the app is built
    capsys.readouterr()

    answer = app.test_client().post(
        "/webhooks/github", data=(body := blog.push_body()), headers=github_headers(body, delivery="log-1")
    )

    assert answer.status_code == 200
    records = lines_for(capsys.readouterr().err, delivery_uuid("log-1"))
    assert [r["message"] for r in (records[0], records[-1])] == [RECEIVED, COMPLETE]
    [complete] = of(records, COMPLETE)
    assert all(name in complete for name in CONTRACT_FIELDS)
    assert (complete["processed"], complete["succeeded"], complete["failed"]) == (2, 2, 0)
    assert complete["outcome"] == "success"


@pytest.mark.parametrize(
    ("case", "status", "outcome"),
    [
        ("ping", 200, "pong"),
        ("other branch", 200, "skipped"),
        ("issues event", 200, "skipped"),
        ("no event header", 400, "rejected"),
        ("body not JSON", 400, "rejected"),
    ],
)
def test_a_delivery_that_ends_at_the_webhook_logs_both_lines_with_zero_counts(
    blog: Blog, capsys: pytest.CaptureFixture[str], case: str, status: int, outcome: str
) -> None:
    blog.commit({"articles/a.md": article("A")})
    app = blog.app
    capsys.readouterr()
    body = blog.push_body("refs/heads/other" if case == "other branch" else "refs/heads/main")
    if case == "body not JSON":
        body = b"{not json"
    headers = github_headers(
        body, delivery="log-2", event={"ping": "ping", "issues event": "issues"}.get(case, "push")
    )
    if case == "no event header":
        del headers["X-GitHub-Event"]

    answer = app.test_client().post("/webhooks/github", data=body, headers=headers)

    assert answer.status_code == status
    records = lines_for(capsys.readouterr().err, delivery_uuid("log-2"))
    assert len(of(records, RECEIVED)) == 1
    [complete] = of(records, COMPLETE)
    assert records.index(complete) > records.index(of(records, RECEIVED)[0])
    assert (complete["processed"], complete["succeeded"], complete["failed"]) == (0, 0, 0)
    assert complete["outcome"] == outcome and complete["status"] == status
    assert isinstance(complete["duration_ms"], float)


def test_an_unsigned_post_logs_its_own_outcome_and_no_delivery_line(
    blog: Blog, capsys: pytest.CaptureFixture[str]
) -> None:
    blog.commit({"articles/a.md": article("A")})
    body = blog.push_body("refs/heads/main")
    headers = github_headers(body, delivery="log-unsigned")
    headers["X-Hub-Signature-256"] = "sha256=" + "0" * 64
    capsys.readouterr()

    answer = blog.app.test_client().post("/webhooks/github", data=body, headers=headers)

    assert answer.status_code == 401
    records = lines_for(capsys.readouterr().err, delivery_uuid("log-unsigned"))
    assert [r["message"] for r in records] == ["Rejected unsigned webhook"]
    assert records[0]["status"] == 401


def test_in_lambda_mode_the_accept_logs_received_and_the_worker_logs_the_one_completion(
    blog: Blog, capsys: pytest.CaptureFixture[str]
) -> None:
    blog.commit({"articles/a.md": article("A")})
    app = blog.lambda_app()
    capsys.readouterr()
    body = blog.push_body()

    accepted = app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="log-3")
    )
    after_accept = lines_for(capsys.readouterr().err, delivery_uuid("log-3"))
    result = dispatch(app, json.loads(blog.invoker.payloads[-1]), None)
    after_worker = lines_for(capsys.readouterr().err, delivery_uuid("log-3"))

    assert accepted.status_code == 202 and result["body"]["processed"] == 1
    assert len(of(after_accept, RECEIVED)) == 1 and of(after_accept, COMPLETE) == []
    [complete] = of(after_worker, COMPLETE)
    assert (complete["processed"], complete["succeeded"], complete["failed"]) == (1, 1, 0)


def test_a_worker_failure_still_logs_the_completion_with_its_error(
    blog: Blog, capsys: pytest.CaptureFixture[str]
) -> None:
    blog.commit({"articles/a.md": article("A")})
    app = blog.app
    capsys.readouterr()
    body = json.dumps(push_payload(ref="refs/heads/main", installation_id=999, repo="octo/blog")).encode()

    answer = app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="log-4")
    )

    assert answer.status_code == 422
    [complete] = of(lines_for(capsys.readouterr().err, delivery_uuid("log-4")), COMPLETE)
    assert complete["outcome"] == "failed" and complete["error_type"] == "UnknownInstallation"
    assert (complete["processed"], complete["succeeded"], complete["failed"]) == (0, 0, 0)
