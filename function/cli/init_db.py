"""``blog-api init-db``: create the tables of a new database, or migrate an earlier one (``migrate``)."""

from __future__ import annotations

import click

from function.cli.context import Context, pass_context


@click.command("init-db")
@pass_context
def init_db(ctx: Context) -> None:
    """Create the tables, or bring an earlier database up to date (runs `migrate`); idempotent."""
    from function.worker.maintenance import initialise

    report = initialise(ctx.services().database())
    for line in report.lines():
        click.echo(line)
    click.echo("database ready")
