"""Operations commands of ``blog-api``: ``logs durations`` and ``redeliver``.

Loaded by ``function.cli.main`` when present; registering on the core group keeps ``cli.py`` to the
core commands. Like every command, they read the app's settings and fail with one line.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import click

from function.cli.main import Context, cli, pass_context

_DURATION = re.compile(r"(\d+)([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``2h``, ``3d`` or a sum like ``1h30m``; ValueError for anything else."""
    cleaned = text.strip().lower()
    parts = _DURATION.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(f"{text!r} is not a duration like 90s, 30m, 2h or 3d")
    total = timedelta()
    for number, unit in parts:
        total += timedelta(**{_UNITS[unit]: int(number)})
    if total <= timedelta():
        raise ValueError("the duration must be more than zero")
    return total


class DurationType(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: Any, ctx: Any) -> timedelta:
        if isinstance(value, timedelta):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


DURATION = DurationType()


def _iso(value: datetime | None) -> str:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z") if value else "-"


def _ms(value: float | None) -> str:
    return f"{value:.0f}" if value is not None else "-"


@cli.group("logs")
def logs() -> None:
    """Read the function's CloudWatch Logs."""


@logs.command("durations")
@click.option("--log-group", required=True, help="e.g. /aws/lambda/d-st-blog-api")
@click.option("--since", type=DURATION, default="2h", show_default=True, help="how far back")
@click.option("--page-size", type=click.IntRange(1, 10_000), default=None, help="events per request")
@click.option("--endpoint-url", default=None, hidden=True, help="CloudWatch Logs endpoint (tests)")
@pass_context
def logs_durations(
    ctx: Context, log_group: str, since: timedelta, page_size: int | None, endpoint_url: str | None
) -> None:
    """Pair 'Received GitHub webhook' with 'Webhook processing complete' by delivery; p50/p95/max."""
    from function.aws import clients as aws_clients
    from function.cli.log_durations import pair, read_events, stats

    settings = ctx.services().settings
    client = aws_clients.client(
        "logs",
        connect_timeout=3,
        read_timeout=20,
        attempts=5,
        https_proxy=settings.https_proxy,
        no_proxy=settings.no_proxy,
        endpoint_url=endpoint_url,
    )
    now = datetime.now(UTC)
    start_ms = int((now - since).timestamp() * 1000)
    try:
        timings = pair(read_events(client, log_group, start_ms, page_size=page_size))
    except Exception as exc:  # botocore's errors: one line, not a traceback
        raise click.ClickException(f"reading {log_group}: {type(exc).__name__}: {exc}") from exc

    click.echo("delivery\treceived\tcomplete\tduration_ms\tworker_ms\tprocessed\tfailed")
    for t in timings:
        click.echo(
            f"{t.delivery}\t{_iso(t.received)}\t{_iso(t.complete)}\t{_ms(t.duration_ms)}\t"
            f"{_ms(t.worker_ms)}\t{'-' if t.processed is None else t.processed}\t"
            f"{'-' if t.failed is None else t.failed}"
        )
    summary = stats(timings)
    unfinished = sum(1 for t in timings if t.complete is None)
    if summary is None:
        click.echo(
            f"no complete deliveries in {log_group} since {_iso(now - since)} ({unfinished} unfinished)"
        )
        return
    click.echo(
        f"deliveries={summary.count} p50_ms={summary.p50:.0f} p95_ms={summary.p95:.0f} "
        f"max_ms={summary.max:.0f} unfinished={unfinished}"
    )


@cli.command("redeliver")
@click.option("--since", type=DURATION, default="24h", show_default=True, help="window, at most 3d")
@click.option("--dry-run", is_flag=True, help="list what would be redelivered; change nothing")
@pass_context
def redeliver(ctx: Context, since: timedelta, dry_run: bool) -> None:
    """Redeliver failed GitHub App deliveries (GitHub's documented algorithm; see the README, "Operating")."""
    from function.github.hook_deliveries import api_from_settings
    from function.store.connection import connection
    from function.store.sweep_state import SweepStateStore
    from function.worker.redelivery import MAX_WINDOW, iter_lines, sweep, sync_undelivered_push

    services = ctx.services()
    if since > MAX_WINDOW:
        click.echo(f"window capped at {MAX_WINDOW.days} days (GitHub keeps deliveries that long)")
        since = MAX_WINDOW
    api, http = api_from_settings(services.settings)
    try:
        with connection(ctx.existing_database()) as db:
            report = sweep(
                api,
                SweepStateStore(db),
                now=datetime.now(UTC),
                window=since,
                dry_run=dry_run,
                # A push that never reached the function (413, no answer) is synced here instead.
                full_sync=lambda attempt: sync_undelivered_push(services, api, attempt),
            )
    finally:
        http.close()
    click.echo(
        f"window: since {_iso(report.since)}; fetched {report.fetched} attempts "
        f"({report.guids} deliveries) in {report.pages} page(s)"
    )
    for line in iter_lines(report):
        click.echo(line)
    verb = "would redeliver" if dry_run else "redelivered"
    planned = sum(d.verdict == "redeliver" for d in report.decisions)
    done = planned if dry_run else len(report.redelivered)
    synced = sum(d.verdict == "full sync" for d in report.decisions) if dry_run else len(report.synced)
    click.echo(
        f"{verb} {done}, "
        + (f"synced instead {synced}, " if synced else "")
        + f"refused {len(report.errors)}"
        + (" (dry run: nothing sent)" if dry_run else "")
    )
    if report.errors:
        sys.exit(1)
