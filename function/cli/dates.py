"""``blog-api dates import``: date a blog's articles once from its repository's git history."""

from __future__ import annotations

from pathlib import Path

import click

from function.cli.context import Context, pass_context


@click.group()
def dates() -> None:
    """Publication dates of a user's articles."""


@dates.command("import")
@click.option("--user", "user_name", required=True)
@click.option(
    "--from",
    "clone",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="a local clone of the user's repository (its root, or its articles folder)",
)
@pass_context
def dates_import(ctx: Context, user_name: str, clone: Path) -> None:
    """Date the articles the first sync dated "now" by the commit that added each file (renames followed).
    Idempotent; a date already served (front matter, file name, history, or published after the first
    sync) is never moved; a draft is dated when it is first published."""
    from function.worker.history_dates import import_dates, read_history

    services = ctx.services()
    history = read_history(clone, services.settings.articles_dir)
    click.echo(history.described)
    with ctx.store() as store:
        result = import_dates(store.users, store.locks, store.dates, user_name, history)
    for slug, (was, now) in sorted(result.dated.items()):
        click.echo(f"  dated {slug}: {was:%Y-%m-%d %H:%M} -> {now:%Y-%m-%d %H:%M} UTC")
    click.echo(
        f"dates import {user_name}: {len(result.dated)} dated from the history, "
        f"{len(result.kept)} kept (a date already served), "
        f"{len(result.drafts)} drafts (dated when first published), "
        f"{len(result.not_in_history)} not in the history, {len(result.not_synced)} not synced yet"
    )
    if result.not_synced and not (result.dated or result.kept or result.drafts or result.not_in_history):
        click.echo(
            f"  nothing of {user_name}'s is synced yet: sync first (`blog-api sync --user {user_name}`, "
            "or the first push), then run this again",
            err=True,
        )
