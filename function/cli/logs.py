"""``blog-api logs durations``: how long deliveries took, read from the function's CloudWatch Logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click

from function.cli.context import Context, pass_context
from function.cli.durations import DURATION, iso


def _ms(value: float | None) -> str:
    return f"{value:.0f}" if value is not None else "-"


@click.group("logs")
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
            f"{t.delivery}\t{iso(t.received)}\t{iso(t.complete)}\t{_ms(t.duration_ms)}\t"
            f"{_ms(t.worker_ms)}\t{'-' if t.processed is None else t.processed}\t"
            f"{'-' if t.failed is None else t.failed}"
        )
    summary = stats(timings)
    unfinished = sum(1 for t in timings if t.complete is None)
    if summary is None:
        click.echo(
            f"no complete deliveries in {log_group} since {iso(now - since)} ({unfinished} unfinished)"
        )
        return
    click.echo(
        f"deliveries={summary.count} p50_ms={summary.p50:.0f} p95_ms={summary.p95:.0f} "
        f"max_ms={summary.max:.0f} unfinished={unfinished}"
    )
