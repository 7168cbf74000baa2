"""The schedule's sweep inside the function: only through the pass-through path, remembered in the DB."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from function import handler as handler_module
from function.aws.dispatch import dispatch
from function.errors import PassThroughFailed
from function.store.connection import connection
from function.store.models import Delivery
from function.store.sweep_state import SweepStateStore
from function.worker.redelivery import is_scheduled_event
from shared.names import SCHEDULED_REDELIVERY_KIND
from tests.kit.blog_fixtures import Blog
from tests.kit.blog_fixtures import article as blog_article
from tests.kit.deliveries import SECRET, as_http_event, aws_event
from tests.kit.github_fixtures import AppKey
from tests.kit.github_standin import GitHubStandIn
from tests.kit.hook_deliveries import HookDeliveries

SCHEDULED = {"kind": SCHEDULED_REDELIVERY_KIND}


def minutes_ago(n: float) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=n)


def test_the_schedule_input_in_infra_is_recognised() -> None:
    from infra.schedule import SCHEDULED_EVENT

    assert is_scheduled_event(json.dumps(SCHEDULED_EVENT).encode())
    assert not is_scheduled_event(b'{"kind": "github-webhook", "event": "push"}')
    assert not is_scheduled_event(b"not json")


def test_scheduled_event_through_the_pass_through_redelivers_and_remembers(
    blog: Blog, hook_deliveries: HookDeliveries
) -> None:
    # GIVEN a delivery that failed twice and one that failed and then succeeded
    hook_deliveries.add(guid="g", status_code=503, at=minutes_ago(40))
    newest = hook_deliveries.add(guid="g", status_code=503, at=minutes_ago(30), redelivery=True)
    hook_deliveries.add(guid="h", status_code=503, at=minutes_ago(20))
    hook_deliveries.add(guid="h", status_code=202, at=minutes_ago(19), redelivery=True)
    app = blog.lambda_app()

    # WHEN the schedule fires twice
    first = dispatch(app, SCHEDULED, None)
    second = dispatch(app, SCHEDULED, None)

    # THEN exactly one redelivery, of the newest failed attempt, and the watermark is stored
    assert first["statusCode"] == 200
    assert first["body"]["redelivered"] == [newest["id"]]
    assert second["body"]["redelivered"] == []
    assert second["body"]["alreadyHandled"] == 1
    assert hook_deliveries.redelivered == [newest["id"]]
    with connection(blog.db) as db:
        mark = SweepStateStore(db).load()
    assert mark is not None and mark.delivery_id == max(d["id"] for d in hook_deliveries.history)


def test_scheduled_event_over_http_in_inline_mode_is_forbidden(
    blog: Blog, hook_deliveries: HookDeliveries, github: GitHubStandIn
) -> None:
    hook_deliveries.add(guid="g", status_code=503, at=minutes_ago(5))

    answer = blog.client.post("/events", json=SCHEDULED)

    assert answer.status_code == 403
    assert answer.get_json()["error"] == "FORBIDDEN"
    assert github.count("hook_deliveries") == 0


def test_scheduled_event_over_api_gateway_in_lambda_mode_is_forbidden(
    blog: Blog, hook_deliveries: HookDeliveries, github: GitHubStandIn
) -> None:
    event = as_http_event("apiGatewayProxyV2Event", "POST", "/events", json.dumps(SCHEDULED).encode(), {})

    answer = dispatch(blog.lambda_app(), event, None)

    assert answer["statusCode"] == 403
    assert github.count("hook_deliveries") == 0


def test_eventbridge_shaped_events_are_still_envelopes_not_sweeps(
    blog: Blog, hook_deliveries: HookDeliveries
) -> None:
    # Only the constant input triggers the sweep; a default EventBridge event is not an envelope either.
    answer = dispatch(blog.lambda_app(), aws_event("eventBridgeEvent"), None)

    assert answer["statusCode"] == 400
    assert hook_deliveries.redelivered == []


def test_github_unavailable_raises_so_lambda_retries(
    blog: Blog, github: GitHubStandIn, hook_deliveries: HookDeliveries
) -> None:
    github.fail("/app/hook/deliveries", 503, times=None)

    with pytest.raises(PassThroughFailed):
        dispatch(blog.lambda_app(), SCHEDULED, None)


def test_through_the_lambda_handler_with_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    github: GitHubStandIn,
    github_app_key: AppKey,
    hook_deliveries: HookDeliveries,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the function's environment on Lambda, on a database set up with `blog-api init-db`
    from tests.kit.cli import run_cli

    env = {
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "AWS_LAMBDA_FUNCTION_NAME": "d-st-blog-api",
        "DATABASE_URL": f"sqlite:///{tmp_path}/fn.db",
        "GITHUB_APP_ID": str(github.app_id),
        "GITHUB_APP_PRIVATE_KEY": github_app_key.private_pem,
        "GITHUB_API_URL": github.url,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("HTTPS_PROXY", "https_proxy", "GITHUB_WEBHOOK_SECRET_PARAM", "DATABASE_URL_PARAM"):
        monkeypatch.delenv(name, raising=False)
    assert run_cli("init-db").exit_code == 0
    failed = hook_deliveries.add(guid="g", status_code=502, at=minutes_ago(3))
    monkeypatch.setattr(handler_module, "_app", None)
    capsys.readouterr()

    # WHEN EventBridge invokes the function with the schedule's constant input
    answer = handler_module.handler(dict(SCHEDULED), None)

    # THEN the failed delivery is redelivered and the Redeliveries metric is written as EMF
    assert answer["statusCode"] == 200, answer
    assert hook_deliveries.redelivered == [failed["id"]]
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"')]
    [metric] = [m for m in emf if "Redeliveries" in m]
    assert metric["Redeliveries"] == 1
    assert metric["FunctionName"] == "d-st-blog-api"


def test_without_app_credentials_the_sweep_is_refused_without_retries(
    blog: Blog, hook_deliveries: HookDeliveries
) -> None:
    from function.app import create_app
    from function.services import Services
    from function.settings import Settings

    settings = Settings(
        **{**blog.settings.__dict__, "lambda_function_name": "d-st-blog-api", "github_app_id": None}
    )
    app = create_app(services=Services(settings, source=blog.source, database=blog.db, invoker=blog.invoker))

    answer = dispatch(app, SCHEDULED, None)

    assert answer["statusCode"] == 422
    assert answer["body"]["error"] == "NOT_CONFIGURED"


def test_the_sweep_deletes_delivery_records_past_the_retention_and_keeps_the_last_sync(
    blog: Blog, hook_deliveries: HookDeliveries
) -> None:
    # GIVEN two syncs of the blog and another delivery received 100 days ago (past the default retention
    # of 90 days), and a delivery of yesterday
    blog.commit({"articles/one.md": blog_article("One")})
    assert blog.push(delivery="d-1").status_code == 200
    blog.commit({"articles/two.md": blog_article("Two")})
    assert blog.push(delivery="d-2").status_code == 200
    long_ago = (datetime.now(UTC) - timedelta(days=100)).replace(tzinfo=None)
    with blog.store() as store:
        second, first = (record.delivery_id for record in store.deliveries.recent_deliveries(2))
        store.deliveries.start_delivery("d-other", "push", 1, "someone/else", long_ago, long_ago)
        store.deliveries.start_delivery(
            "d-new", "push", 1, "someone/else", minutes_ago(1440), minutes_ago(1440)
        )
        Delivery.update(received_at=long_ago, started_at=long_ago, finished_at=long_ago).where(
            Delivery.delivery_id.in_([first, second])
        ).bind(blog.db).execute()

    # WHEN the schedule fires
    answer = dispatch(blog.lambda_app(), SCHEDULED, None)

    # THEN the old records are gone but the blog's last sync, which a replayed push is compared with
    assert answer["statusCode"] == 200
    with blog.store() as store:
        assert {record.delivery_id for record in store.deliveries.recent_deliveries(10)} == {second, "d-new"}
    # AND the same push delivered again is still recognised as synced: nothing written
    replay = blog.push(delivery="d-3").get_json()
    assert replay["status"] == "skipped" and "already synced" in json.dumps(replay), replay
