"""The ``blog-api`` command line: every command group, registered here, and the one-line failure.

Each command lives in its own module of ``function.cli`` and reads the same settings as the app
(``function.cli.context``); this module only lists them and turns expected failures into one line and a
non-zero exit.
"""

from __future__ import annotations

import logging
import sys

import click

from function.cli.context import Context
from function.cli.dates import dates
from function.cli.deliveries import deliveries
from function.cli.failures import describe
from function.cli.hooks import hooks
from function.cli.init_db import init_db
from function.cli.logs import logs
from function.cli.migrate import migrate
from function.cli.preview import preview
from function.cli.redeliver import redeliver
from function.cli.search import search
from function.cli.send_webhook import send_webhook
from function.cli.sync import sync
from function.cli.text_logs import configure_text_logging
from function.cli.users import users
from function.errors import BlogApiError, ConfigError
from function.store.url import DatabaseTarget

# Every command of blog-api: a new one is written in its own module and added here.
COMMANDS: tuple[click.Command, ...] = (
    init_db,
    migrate,
    users,
    sync,
    search,
    dates,
    deliveries,
    redeliver,
    logs,
    send_webhook,
    hooks,
    preview,
)


@click.group(commands=COMMANDS)
def cli() -> None:
    """blog-api: sync a Git-backed blog's articles and serve them."""


def _expected_errors() -> tuple[type[BaseException], ...]:
    import peewee

    from function.errors import (
        DatabaseUnavailable,
        LockTimeout,
        SourcePermanentError,
        SourceUnavailable,
        StoreStepFailed,
        UnknownUser,
        UserExists,
    )

    return (
        BlogApiError,
        ConfigError,
        DatabaseUnavailable,
        SourceUnavailable,
        SourcePermanentError,
        LockTimeout,
        # A sync's statement failed: the line says the step, the chunk rolled back and what is served.
        StoreStepFailed,
        UserExists,
        UnknownUser,
        # e.g. "no such table": the one line says so; `blog-api init-db` is the usual fix.
        peewee.DatabaseError,
        # e.g. a sqlite folder that cannot be created, a payload file that cannot be read.
        OSError,
    )


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: runs the CLI and turns expected failures into one line and exit 1."""
    context = Context()
    # On a terminal, a log line is words with its fields, never a bare message (the function logs JSON).
    handler = configure_text_logging()
    try:
        cli.main(args=argv, prog_name="blog-api", standalone_mode=False, obj=context)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        if isinstance(exc, click.UsageError):
            exc.show()  # the command line's own mistake, with its usage
        else:
            click.echo(f"Error: {_redacted(context, exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except _expected_errors() as exc:
        click.echo(f"error: {_redacted(context, describe(exc, _target_of(context)))}", err=True)
        sys.exit(1)
    finally:
        # The stream is the command's stderr: nothing after the command (in-process callers, tests)
        # writes to it.
        logging.getLogger().removeHandler(handler)


def _redacted(context: Context, line: str) -> str:
    """``line`` without secrets: their shapes, and the values configured (a driver's message can quote
    the database password, a GitHub answer a token), as the app's logs and answers have it."""
    from function.observability.logs import Redactor

    return Redactor(context.secrets()).text(line)


def _target_of(context: Context) -> DatabaseTarget | None:
    try:
        return context.database_target()
    except ConfigError:
        return None
