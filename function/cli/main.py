"""The ``blog-api`` command line. Reads the same settings as the app; one-line errors, non-zero exit."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from function.errors import BlogApiError, ConfigError
from function.services import Services
from function.settings import Settings
from shared.names import ENV_GITHUB_APP_ID, ENV_WEBHOOK_SECRET_PARAM


class Context:
    """Builds Services from the environment on first use, so ``--help`` needs no settings."""

    def __init__(self) -> None:
        self._services: Services | None = None

    def services(self, *, require_secret: bool = False) -> Services:
        if self._services is None:
            self._services = Services(Settings.from_env(require_secret=require_secret))
        return self._services

    @contextmanager
    def store(self) -> Iterator[Any]:
        with self.services().store() as store:
            yield store


pass_context = click.make_pass_decorator(Context, ensure=True)


def _expected_errors() -> tuple[type[BaseException], ...]:
    import peewee

    from function.errors import (
        DatabaseUnavailable,
        LockTimeout,
        SourcePermanentError,
        SourceUnavailable,
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
        UserExists,
        UnknownUser,
        # e.g. "no such table": the one line says so; `blog-api init-db` is the usual fix.
        peewee.DatabaseError,
        # e.g. a sqlite folder that cannot be created, a payload file that cannot be read.
        OSError,
    )


@click.group()
def cli() -> None:
    """blog-api: sync a Git-backed blog's articles and serve them."""


@cli.command("init-db")
@pass_context
def init_db(ctx: Context) -> None:
    """Create the tables (idempotent); refuse a database whose tables an older version made."""
    from function.store.connection import connection
    from function.store.models import create_tables, schema_differences

    db = ctx.services().database()
    with connection(db):
        create_tables(db)
        differences = schema_differences(db)
    if differences:
        raise BlogApiError(
            "the database's tables were made by another version of blog-api ("
            + "; ".join(differences)
            + "): migrate them, or for a local database made by `make run`, delete .data/ and run again"
        )
    click.echo("database ready")


@cli.group()
def users() -> None:
    """Blog users and their GitHub App installations."""


def _user_line(user: Any) -> str:
    inst = user.installation_id if user.installation_id is not None else "-"
    return f"{user.name}\t{user.email}\tinstallation={inst}\trepository={user.repository or '-'}"


@users.command("add")
@click.option("--name", required=True)
@click.option("--email", required=True)
@click.option("--installation-id", type=int, default=None)
@click.option("--repository", default=None, help="owner/name of the article repository (learned from pushes)")
@click.option("--if-missing", is_flag=True, help="succeed quietly when the user already exists")
@pass_context
def users_add(
    ctx: Context, name: str, email: str, installation_id: int | None, repository: str | None, if_missing: bool
) -> None:
    """Register a user."""
    _check_new_user(name, email, installation_id, repository)
    with ctx.store() as store:
        existing = store.get_user(name)
        if existing is not None and if_missing:
            click.echo(f"user exists: {_user_line(existing)}")
            return
        user = store.add_user(name, email, installation_id, repository)
    click.echo(f"added: {_user_line(user)}")


def _check_new_user(name: str, email: str, installation_id: int | None, repository: str | None) -> None:
    """What the database would take but nobody could use: the name is a URL path segment
    (``/users/<name>/articles``) and at most 100 characters."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
        raise BlogApiError(
            "--name must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    if "@" not in email.strip("@") or any(c.isspace() for c in email) or len(email) > 255:
        raise BlogApiError("--email must be an e-mail address")
    if installation_id is not None and not 0 < installation_id < 2**63:
        raise BlogApiError("--installation-id must be a positive number")
    if repository is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        raise BlogApiError("--repository must look like owner/name")


@users.command("list")
@pass_context
def users_list(ctx: Context) -> None:
    """List users."""
    with ctx.store() as store:
        for user in store.list_users():
            click.echo(_user_line(user))


@users.command("set-installation")
@click.option("--name", required=True)
@click.option("--installation-id", type=int, required=True)
@pass_context
def users_set_installation(ctx: Context, name: str, installation_id: int) -> None:
    """Point a user at a GitHub App installation (fixes 'unknown installation')."""
    with ctx.store() as store:
        user = store.set_installation(name, installation_id)
    click.echo(f"updated: {_user_line(user)}")


@cli.command("sync")
@click.option("--user", "user_name", required=True)
@click.option("--branch", default=None, help="branch to read (default: ARTICLE_BRANCH or the default branch)")
@click.option(
    "--repository", default=None, help="owner/name to read (default: the one learned from the user's pushes)"
)
@pass_context
def sync(ctx: Context, user_name: str, branch: str | None, repository: str | None) -> None:
    """Full scan now: reconcile every article of the user's repository."""
    services = ctx.services()
    if services.settings.source_dir is None and not repository:
        with services.store() as store:
            user = store.get_user(user_name)
        if user is not None and not user.repository:
            raise ConfigError(
                f"user {user_name!r} has no repository yet (it is learned from their first push): "
                "pass --repository owner/name"
            )
    interactive = sys.stdout.isatty()
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if not interactive or total == 0:
            return
        if bar is None:
            bar = click.progressbar(length=total, label="fetching changed articles")
            bar.__enter__()
        bar.update(done - bar.pos)

    with services.store() as store:
        worker = services.worker(store)
        try:
            summary = worker.sync_user(
                user_name,
                branch=branch or services.settings.article_branch,
                repository=repository,
                progress=progress,
            )
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    click.echo(
        f"synced {user_name}: processed={summary.processed} succeeded={summary.succeeded} "
        f"failed={summary.failed} fetched={summary.fetched} archived={summary.archived} "
        f"head={summary.head_sha}"
    )
    # Drafts are not served: "0 published of 41" must not pass for a clean sync.
    published = summary.succeeded - summary.drafts
    click.echo(f"  {published} published, {summary.drafts} drafts (publish: false or absent; not served)")
    for failure in summary.failures:
        again = " (unchanged since it last failed; not fetched again)" if failure.remembered else ""
        click.echo(f"  failed {failure.path}: {failure.message}{again}")
    for warning in summary.warnings:
        click.echo(f"  warning {warning.path}: {warning.message}")
    if summary.failed:
        sys.exit(2)


@cli.command("deliveries")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@pass_context
def deliveries(ctx: Context, limit: int) -> None:
    """Recent deliveries: id, event, received → finished, counts, outcome."""
    with ctx.store() as store:
        rows = store.recent_deliveries(limit)
    click.echo("delivery\tevent\treceived\tfinished\tduration_ms\tprocessed/succeeded/failed\toutcome")
    for row in rows:
        finished = row.finished_at.isoformat(timespec="milliseconds") if row.finished_at else "-"
        duration = (
            f"{(row.finished_at - row.received_at).total_seconds() * 1000:.0f}"
            if row.finished_at and row.received_at
            else "-"
        )
        click.echo(
            f"{row.delivery_id}\t{row.event}\t{row.received_at.isoformat(timespec='milliseconds')}\t{finished}\t"
            f"{duration}\t{row.processed}/{row.succeeded}/{row.failed}\t{row.outcome}"
            + (f"\t{row.error}" if row.error else "")
        )


def register(command: click.Command) -> None:
    """Add a command defined in another module (keeps this file to the core commands)."""
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: runs the CLI and turns expected failures into one line and exit 1."""
    _load_extra_commands()
    try:
        cli.main(args=argv, prog_name="blog-api", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except _expected_errors() as exc:
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        click.echo(f"error: {message}".splitlines()[0], err=True)
        sys.exit(1)


def _load_extra_commands() -> None:
    """Commands that live in their own modules (operations tooling)."""
    import importlib

    for module in ("function.cli.ops_commands",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


@cli.command("send-webhook")
@click.argument("url")
@click.option("--secret", envvar="GITHUB_WEBHOOK_SECRET", help="webhook secret (default: env)")
@click.option("--secret-param", default=None, help="read the secret from this SSM SecureString instead")
@click.option("--event", default="push", show_default=True)
@click.option("--payload", "payload_file", type=click.File("rb"), default=None, help="body to send (a file)")
@click.option("--delivery", default=None, help="X-GitHub-Delivery (default: a new UUID)")
@click.option("--repo", default="demo/blog", show_default=True, help="without --payload: repository")
@click.option("--ref", default="refs/heads/main", show_default=True, help="without --payload: ref")
@click.option("--installation-id", type=int, default=1, show_default=True, help="without --payload")
@click.option("--form", is_flag=True, help="send as application/x-www-form-urlencoded (payload=...)")
def send_webhook(
    url: str,
    secret: str | None,
    secret_param: str | None,
    event: str,
    payload_file: Any,
    delivery: str | None,
    repo: str,
    ref: str,
    installation_id: int,
    form: bool,
) -> None:
    """Send a delivery signed as GitHub signs it; print status, body and latency."""
    from urllib.parse import urlencode

    from function.cli.send_webhook import build_push, encode, send
    from function.settings import ssm_parameter_reader

    if not secret_param and not secret:
        # As the app reads its settings: the parameter only when the plain variable is unset.
        secret_param = os.environ.get(ENV_WEBHOOK_SECRET_PARAM) or None
    if secret_param:
        # The same proxy settings the app reads, NO_PROXY included.
        env = Settings.from_env(require_secret=False)
        values = ssm_parameter_reader(env.https_proxy, env.no_proxy)([secret_param])
        if secret_param not in values:
            raise ConfigError(f"SSM parameter {secret_param} was not found")
        secret = values[secret_param]
    if not secret:
        raise ConfigError(
            "no secret: pass --secret or --secret-param, or set GITHUB_WEBHOOK_SECRET "
            "(or GITHUB_WEBHOOK_SECRET_PARAM)"
        )
    if payload_file is not None:
        body = payload_file.read()
    elif event == "ping":
        body = encode({"zen": "Keep it logically awesome.", "hook_id": 0})
    else:
        body = encode(build_push(repo, ref, installation_id))
    content_type = "application/json"
    if form:
        body = urlencode({"payload": body.decode("utf-8")}).encode()
        content_type = "application/x-www-form-urlencoded"
    try:
        sent = send(
            url,
            secret,
            body,
            event=event,
            delivery=delivery,
            content_type=content_type,
            app_id=os.environ.get(ENV_GITHUB_APP_ID),
        )
    except Exception as exc:  # any transport failure is reported as one line
        raise ConfigError(f"could not send to {url}: {type(exc).__name__}: {exc}") from exc
    click.echo(f"status: {sent.status}")
    click.echo(f"body: {sent.body.strip()}")
    click.echo(f"latency_ms: {sent.latency_ms:.1f}")
    click.echo(f"delivery: {sent.delivery}")
    if sent.status >= 400:
        sys.exit(1)
