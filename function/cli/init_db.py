"""``blog-api init-db``: create the tables, or refuse a database an older version made."""

from __future__ import annotations

import click

from function.cli.context import Context, pass_context


@click.command("init-db")
@pass_context
def init_db(ctx: Context) -> None:
    """Create the tables (idempotent); refuse a database whose tables an older version made."""
    from function.worker.maintenance import initialise, refuse_differences

    refuse_differences(initialise(ctx.services().database()))
    click.echo("database ready")
