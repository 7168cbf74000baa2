"""``blog-api redeliver``: ask GitHub to redeliver the App's failed deliveries, as the schedule does."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

import click

from function.cli.context import Context, pass_context
from function.cli.durations import DURATION, iso


@click.command("redeliver")
@click.option("--since", type=DURATION, default="24h", show_default=True, help="window, at most 3d")
@click.option("--dry-run", is_flag=True, help="list what would be redelivered; change nothing")
@click.option(
    "--confirm-removal",
    is_flag=True,
    help="redeliver the deliveries the safety valve held, and let them archive what their source lacks",
)
@pass_context
def redeliver(ctx: Context, since: timedelta, dry_run: bool, confirm_removal: bool) -> None:
    """Redeliver failed GitHub App deliveries (GitHub's documented algorithm; see the README, "Operating")."""
    from function.github.hook_deliveries import api_from_settings
    from function.store.facade import job_store
    from function.worker.redelivery import MAX_WINDOW, iter_lines, sweep, sync_undelivered_push

    services = ctx.services()
    if since > MAX_WINDOW:
        click.echo(f"window capped at {MAX_WINDOW.days} days (GitHub keeps deliveries that long)")
        since = MAX_WINDOW
    if confirm_removal:
        _redeliver_held(ctx, since, dry_run)
        return
    api, http = api_from_settings(services.settings)
    try:
        with job_store(ctx.existing_database()) as store:
            report = sweep(
                api,
                store.sweep_state(),
                now=datetime.now(UTC),
                window=since,
                dry_run=dry_run,
                # A push that never reached the function (413, no answer) is synced here instead.
                full_sync=lambda attempt: sync_undelivered_push(services, api, attempt),
            )
    finally:
        http.close()
    click.echo(
        f"window: since {iso(report.since)}; fetched {report.fetched} attempts "
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


def _redeliver_held(ctx: Context, window: timedelta, dry_run: bool) -> None:
    """``--confirm-removal``: each held delivery's user may archive up to what they serve now, then
    GitHub redelivers the held deliveries (answered 2xx, so the sweep never would)."""
    from function.github.hook_deliveries import api_from_settings
    from function.worker.redelivery import redeliver_held

    since = datetime.now(UTC) - window
    with ctx.store() as store:
        held = store.deliveries.held_since(since)
        users = {}
        for record in held:
            user = (
                store.users.find_user_by_installation(record.installation_id)
                if record.installation_id
                else None
            )
            if user is not None:
                users[user.id] = user
        if not dry_run:
            for user in users.values():
                store.users.confirm_removal(user.id, store.reads.served_count(user.name))
    if not held:
        click.echo(f"no delivery was held since {iso(since)}: nothing to confirm")
        return
    names = ", ".join(sorted(user.name for user in users.values())) or "nobody registered"
    api, http = api_from_settings(ctx.services().settings)
    try:
        report = redeliver_held(api, {record.delivery_id for record in held}, since, dry_run=dry_run)
    finally:
        http.close()
    verb = "would redeliver" if dry_run else "redelivered"
    click.echo(
        f"held since {iso(since)}: {len(held)} deliveries of {names}; {verb} {len(report.redelivered)}"
        + (" (dry run: nothing confirmed or sent)" if dry_run else "; removal confirmed")
    )
    for guid in report.not_found:
        click.echo(
            f"  {guid}: GitHub lists no attempt of it since {iso(since)}: "
            "`blog-api sync --user U --confirm-removal` instead"
        )
    for attempt, message in report.errors:
        click.echo(f"  {attempt.guid}: GitHub refused the redelivery: {message}")
    if report.errors:
        sys.exit(1)
