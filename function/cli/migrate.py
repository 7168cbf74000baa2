"""``blog-api migrate``: bring an earlier database's schema up to this version, in place."""

from __future__ import annotations

import click

from function.cli.context import Context, pass_context


@click.command("migrate")
@pass_context
def migrate(ctx: Context) -> None:
    """Run the migration steps the database lacks, once each and in order; print what ran."""
    from function.worker.maintenance import migrate_database

    report = migrate_database(ctx.existing_database())
    for line in report.lines():
        click.echo(line)
