"""``blog-api redeliver``: the sweep from the command line, against the stand-in's deliveries API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.kit.cli import run_cli
from tests.kit.github_standin import GitHubStandIn
from tests.kit.hook_deliveries import HookDeliveries


def minutes_ago(n: float) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=n)


def seed(hooks: HookDeliveries) -> dict[str, int]:
    ids = {}
    hooks.add(guid="fixed-later", status_code=503, at=minutes_ago(50))
    hooks.add(guid="fixed-later", status_code=202, at=minutes_ago(45), redelivery=True)
    hooks.add(guid="failed-twice", status_code=503, at=minutes_ago(40))
    ids["failed-twice"] = hooks.add(
        guid="failed-twice", status_code=504, at=minutes_ago(30), redelivery=True
    )["id"]
    hooks.add(guid="fine", status_code=202, at=minutes_ago(20))
    return ids


def test_dry_run_prints_the_plan_and_sends_nothing(
    hook_deliveries: HookDeliveries, github: GitHubStandIn, app_env: dict[str, str | None]
) -> None:
    ids = seed(hook_deliveries)

    result = run_cli("redeliver", "--dry-run", env=app_env)

    assert result.exit_code == 0, result.stderr
    assert github.count("redeliver") == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("window: since ")
    assert "fetched 5 attempts (3 deliveries) in 1 page(s)" in lines[0]
    assert lines[1].startswith(f"would redeliver\tid={ids['failed-twice']}\tguid=failed-twice\tevent=push")
    assert lines[-1] == "would redeliver 1, refused 0 (dry run: nothing sent)"


def test_redeliver_sends_one_redelivery_per_failed_delivery_and_not_again(
    hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    ids = seed(hook_deliveries)

    first = run_cli("redeliver", "--since", "2h", env=app_env)
    second = run_cli("redeliver", "--since", "2h", env=app_env)

    assert first.exit_code == 0, first.stderr
    assert hook_deliveries.redelivered == [ids["failed-twice"]]
    assert first.stdout.splitlines()[-1] == "redelivered 1, refused 0"
    assert second.stdout.splitlines()[1].startswith("already handled\t")
    assert second.stdout.splitlines()[-1] == "redelivered 0, refused 0"


def test_a_narrow_window_leaves_older_failures_alone(
    hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    seed(hook_deliveries)

    result = run_cli("redeliver", "--since", "10m", env=app_env)

    assert result.exit_code == 0
    assert hook_deliveries.redelivered == []
    assert "fetched 0 attempts" in result.stdout


def test_a_window_over_three_days_is_capped(
    hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    result = run_cli("redeliver", "--since", "7d", "--dry-run", env=app_env)

    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == "window capped at 3 days (GitHub keeps deliveries that long)"


def test_a_refused_redelivery_exits_non_zero(
    hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    failed = hook_deliveries.add(guid="x", status_code=500, at=minutes_ago(5))
    hook_deliveries.refuse.add(failed["id"])

    result = run_cli("redeliver", env=app_env)

    assert result.exit_code == 1
    assert "refused: GitHub answered 422: Validation Failed" in result.stdout


def test_without_app_credentials_it_is_a_one_line_error(app_env: dict[str, str | None]) -> None:
    result = run_cli("redeliver", env={**app_env, "GITHUB_APP_ID": None})

    assert result.exit_code == 1
    assert result.stderr.startswith("error: redelivery needs GITHUB_APP_ID")
    assert result.stderr.count("\n") == 1


def test_a_wrong_app_key_is_a_one_line_error(
    hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    from tests.kit.github_fixtures import generate_app_key

    result = run_cli("redeliver", env={**app_env, "GITHUB_APP_PRIVATE_KEY": generate_app_key().private_pem})

    assert result.exit_code == 1
    assert result.stderr.strip() == "error: listing App hook deliveries: GitHub answered 401"
