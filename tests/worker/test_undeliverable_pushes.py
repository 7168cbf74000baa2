"""A push that never reached the function (413: over Lambda's 6 MB payload limit; or no answer at all)
would fail again if redelivered: the scheduled sweep reads its payload from GitHub's delivery record and
syncs the pinned repository itself, so the push lands however large its delivery was."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from function.aws.dispatch import dispatch
from shared.names import SCHEDULED_REDELIVERY_KIND
from tests.kit.blog_fixtures import Blog, article
from tests.kit.cli import run_cli
from tests.kit.deliveries import push_payload
from tests.kit.github_fixtures import INSTALLATION_ID
from tests.kit.github_standin import GitHubStandIn
from tests.kit.hook_deliveries import HookDeliveries

SCHEDULED = {"kind": SCHEDULED_REDELIVERY_KIND}


def minutes_ago(n: float) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=n)


def huge_push(blog: Blog) -> dict[str, Any]:
    """The push GitHub sent for the stand-in's head, padded past 6 MB with commits, as a push of
    thousands of commits is."""
    payload = json.loads(blog.push_body())
    commit = {"id": "c" * 40, "message": "m" * 1000, "added": [], "removed": [], "modified": []}
    payload["commits"] = [commit] * 7000
    assert len(json.dumps(payload)) > 6 * 1000 * 1000
    return payload


@pytest.mark.parametrize("status_code", [413, 0], ids=["too-large", "no-answer"])
def test_a_push_too_large_for_lambda_is_synced_by_the_sweep_instead_of_redelivered(
    blog: Blog, hook_deliveries: HookDeliveries, github: GitHubStandIn, status_code: int
) -> None:
    blog.commit({f"articles/big{i}.md": article(f"Big {i}") for i in range(3)})
    attempt = hook_deliveries.add(
        guid="huge", status_code=status_code, at=minutes_ago(10), payload=huge_push(blog)
    )
    app = blog.lambda_app()

    first = dispatch(app, SCHEDULED, None)

    assert first["statusCode"] == 200
    assert first["body"]["synced"] == [{"id": attempt["id"], "outcome": "success"}]
    assert first["body"]["redelivered"] == [] and hook_deliveries.redelivered == []
    assert sorted(a["slug"] for a in blog.articles()) == ["big0", "big1", "big2"]
    with blog.store() as store:
        record = store.deliveries.get_delivery("huge")
    assert record is not None and record.outcome == "success" and record.succeeded == 3

    # The next sweep finds it handled: no second sync, no redelivery.
    second = dispatch(app, SCHEDULED, None)
    assert second["body"]["synced"] == [] and second["body"]["alreadyHandled"] == 1
    assert github.count("hook_delivery") == 1


def test_an_undeliverable_push_from_another_repository_changes_nothing(
    blog: Blog, hook_deliveries: HookDeliveries
) -> None:
    blog.commit({"articles/kept.md": article("Kept")})
    blog.push(delivery="first")  # pins octo/blog and its id
    other = push_payload(
        installation_id=INSTALLATION_ID,
        repo="octo/dotfiles",
        after=blog.github.head(),
        repo_id=99_999,
    )
    attempt = hook_deliveries.add(guid="other", status_code=413, at=minutes_ago(5), payload=other)

    answer = dispatch(blog.lambda_app(), SCHEDULED, None)

    assert answer["body"]["synced"] == [{"id": attempt["id"], "outcome": "skipped"}]
    assert [a["slug"] for a in blog.articles()] == ["kept"]


def test_a_failed_push_that_reached_the_function_is_still_redelivered(
    blog: Blog, hook_deliveries: HookDeliveries
) -> None:
    attempt = hook_deliveries.add(guid="flaky", status_code=503, at=minutes_ago(5))

    answer = dispatch(blog.lambda_app(), SCHEDULED, None)

    assert answer["body"]["redelivered"] == [attempt["id"]] and answer["body"]["synced"] == []


def test_a_sync_that_fails_is_tried_again_by_the_next_sweep(
    blog: Blog, hook_deliveries: HookDeliveries, github: GitHubStandIn
) -> None:
    blog.commit({"articles/later.md": article("Later")})
    attempt = hook_deliveries.add(guid="later", status_code=413, at=minutes_ago(5), payload=huge_push(blog))
    github.fail(f"/app/hook/deliveries/{attempt['id']}", 502, times=None)

    first = dispatch(blog.lambda_app(), SCHEDULED, None)
    github.clear_faults()
    second = dispatch(blog.lambda_app(), SCHEDULED, None)

    assert [e["id"] for e in first["body"]["errors"]] == [attempt["id"]]
    assert second["body"]["synced"] == [{"id": attempt["id"], "outcome": "success"}]
    assert [a["slug"] for a in blog.articles()] == ["later"]


def test_blog_api_redeliver_syncs_an_undeliverable_push_too(
    blog: Blog, hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    """The CLI's sweep does as the schedule's: a 413 push is synced, not redelivered."""
    blog.commit({"articles/cli.md": article("Cli")})
    hook_deliveries.add(guid="cli", status_code=413, at=minutes_ago(5), payload=huge_push(blog))
    env = {**app_env, "DATABASE_URL": blog.settings.database_url}

    answer = run_cli("redeliver", env=env)

    assert answer.exit_code == 0, answer.stderr
    assert answer.stdout.splitlines()[-1] == "redelivered 0, synced instead 1, refused 0"
    assert hook_deliveries.redelivered == []
    assert [a["slug"] for a in blog.articles()] == ["cli"]
