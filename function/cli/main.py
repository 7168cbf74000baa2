"""The ``blog-api`` command line. Reads the same settings as the app; one-line errors, non-zero exit."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from function.cli.failures import describe, missing_sqlite_file, transport_reason
from function.errors import BlogApiError, ConfigError
from function.services import Services
from function.settings import Settings
from function.store.url import DatabaseTarget, parse_database_url
from function.worker.maintenance import add_user, new_user_problem
from shared.names import ENV_DATABASE_URL, ENV_DATABASE_URL_PARAM, ENV_GITHUB_APP_ID, ENV_WEBHOOK_SECRET_PARAM


class Context:
    """Builds Services from the environment on first use, so ``--help`` needs no settings."""

    def __init__(self) -> None:
        self._services: Services | None = None

    def services(self, *, require_secret: bool = False) -> Services:
        if self._services is None:
            self._services = Services(Settings.from_env(require_secret=require_secret))
        return self._services

    def database_target(self) -> DatabaseTarget | None:
        """What DATABASE_URL names, once the settings were read (for error lines); else None."""
        if self._services is None:
            return None
        return parse_database_url(self._services.settings.database_url)

    def existing_database(self) -> Any:
        """The database, which must exist: a command that reads or changes data never creates one
        (SQLite would, silently, wherever the command runs); ``init-db`` is what creates it."""
        services = self.services()
        url_is_default = not (os.environ.get(ENV_DATABASE_URL) or os.environ.get(ENV_DATABASE_URL_PARAM))
        target = parse_database_url(services.settings.database_url)
        missing = missing_sqlite_file(target, url_is_default=url_is_default)
        if missing:
            raise ConfigError(missing)
        return services.database()

    @contextmanager
    def store(self) -> Iterator[Any]:
        """A store on a fresh connection to the existing database (``existing_database``)."""
        self.existing_database()
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
    from function.worker.maintenance import initialise, refuse_differences

    refuse_differences(initialise(ctx.services().database()))
    click.echo("database ready")


@cli.group()
def users() -> None:
    """Blog users and their GitHub App installations."""


def _user_line(user: Any) -> str:
    inst = user.installation_id if user.installation_id is not None else "-"
    repo = user.repository or "-"
    if user.repository and user.repository_id is None:
        repo += " (id pinned by its first push)"
    return f"{user.name}\t{user.email}\tinstallation={inst}\trepository={repo}"


@users.command("add")
@click.option("--name", required=True)
@click.option("--email", required=True)
@click.option("--installation-id", type=int, default=None)
@click.option(
    "--repository",
    default=None,
    help="owner/name of the one repository the blog follows (default: the first one that pushes)",
)
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
        user = add_user(store, name, email, installation_id, repository)
    click.echo(f"added: {_user_line(user)}")


def _check_new_user(name: str, email: str, installation_id: int | None, repository: str | None) -> None:
    problem = new_user_problem(name, email, installation_id, repository)
    if problem is not None:
        field, rule = problem
        raise BlogApiError(f"--{field.replace('_', '-')} {rule}")


def _check_repository(repository: str | None) -> None:
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
        if store.get_user(name) is None:
            raise BlogApiError(f"no user named {name!r}: `blog-api users list` shows who exists")
        holder = store.find_user_by_installation(installation_id)
        if holder is not None and holder.name != name:
            raise BlogApiError(
                f"installation {installation_id} is already registered to user {holder.name!r}: "
                "one installation serves one user; check the id (the number at the end of the "
                "installation's settings URL)"
            )
        user = store.set_installation(name, installation_id)
    click.echo(f"updated: {_user_line(user)}")


@users.command("set-repository")
@click.option("--name", required=True)
@click.option("--repository", required=True, help="owner/name of the repository the blog follows from now on")
@pass_context
def users_set_repository(ctx: Context, name: str, repository: str) -> None:
    """Follow another repository. Pushes from any other one are skipped; the next push from this one
    pins its GitHub id. Articles already stored stay until a push or `sync` reconciles them."""
    _check_repository(repository)
    with ctx.store() as store:
        user = store.set_repository(name, repository)
    click.echo(f"updated: {_user_line(user)}")


@cli.command("sync")
@click.option("--user", "user_name", required=True)
@click.option("--branch", default=None, help="branch to read (default: ARTICLE_BRANCH or the default branch)")
@click.option(
    "--repository",
    default=None,
    help="owner/name, for a user who follows no repository yet (it is pinned); default: the followed one",
)
@click.option(
    "--rebuild",
    is_flag=True,
    help="read and render every article again, unchanged ones too (after upgrading blog-api)",
)
@pass_context
def sync(ctx: Context, user_name: str, branch: str | None, repository: str | None, rebuild: bool) -> None:
    """Full scan now: reconcile every article of the user's repository."""
    services = ctx.services()
    # The user first: naming someone who does not exist is the likelier mistake, and its line should
    # not be hidden behind the article source's settings.
    with ctx.store() as store:
        user = store.get_user(user_name)
    if user is None:
        raise BlogApiError(
            f"no user named {user_name!r}: add it with "
            f"`blog-api users add --name {user_name} --email ADDRESS` "
            "(`blog-api users list` shows who exists)"
        )
    if services.settings.source_dir is None and not repository and not user.repository:
        raise ConfigError(
            f"user {user_name!r} follows no repository yet (their first push pins one): "
            "pass --repository owner/name"
        )
    services.settings.check_source()
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

    with ctx.store() as store:
        worker = services.worker(store)
        try:
            summary = worker.sync_user(
                user_name,
                branch=branch or services.settings.article_branch,
                repository=repository,
                progress=progress,
                rebuild=rebuild,
            )
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    told = services.after_sync(summary, user_name=user_name)
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
    if told:
        click.echo(f"  webhooks: told {len(told)} endpoint(s); `blog-api hooks deliveries` shows the answers")
    if summary.failed:
        sys.exit(2)


@cli.command("deliveries")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@pass_context
def deliveries(ctx: Context, limit: int) -> None:
    """Recent deliveries: id, event, received → finished, counts, what changed, outcome, failed paths."""
    with ctx.store() as store:
        rows = store.recent_deliveries(limit)
    click.echo(
        "delivery\tevent\treceived\tfinished\tduration_ms\tprocessed/succeeded/failed\t"
        "written/archived/unchanged\toutcome\tfailed paths or error"
    )
    for row in rows:
        finished = row.finished_at.isoformat(timespec="milliseconds") if row.finished_at else "-"
        duration = (
            f"{(row.finished_at - row.received_at).total_seconds() * 1000:.0f}"
            if row.finished_at and row.received_at
            else "-"
        )
        click.echo(
            f"{row.delivery_id}\t{row.event}\t{row.received_at.isoformat(timespec='milliseconds')}\t{finished}\t"
            f"{duration}\t{row.processed}/{row.succeeded}/{row.failed}\t{_changes(row)}\t{row.outcome}"
            + (f"\t{row.error}" if row.error else "")
        )


def _changes(row: Any) -> str:
    """``written/archived/unchanged``; "-" for a count a delivery recorded before it was kept."""

    def count(value: int | None) -> str:
        return "-" if value is None else str(value)

    return f"{count(row.written)}/{row.archived}/{count(row.unchanged)}"


def register(command: click.Command) -> None:
    """Add a command defined in another module (keeps this file to the core commands)."""
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: runs the CLI and turns expected failures into one line and exit 1."""
    _load_extra_commands()
    context = Context()
    try:
        cli.main(args=argv, prog_name="blog-api", standalone_mode=False, obj=context)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except _expected_errors() as exc:
        click.echo(f"error: {describe(exc, _target_of(context))}", err=True)
        sys.exit(1)


def _target_of(context: Context) -> DatabaseTarget | None:
    try:
        return context.database_target()
    except ConfigError:
        return None


def _load_extra_commands() -> None:
    """Commands that live in their own modules (operations tooling)."""
    import importlib

    for module in ("function.cli.ops_commands", "function.cli.hooks_commands"):
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
@click.option("--ref", default="refs/heads/main", show_default=True, help="without --payload: ref pushed")
@click.option(
    "--default-branch",
    default="main",
    show_default=True,
    help="without --payload: the repository's default branch (the one synced when ARTICLE_BRANCH is unset)",
)
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
    default_branch: str,
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
        body = encode(build_push(repo, ref, installation_id, default_branch=default_branch))
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
        raise ConfigError(
            f"could not send to {url} ({transport_reason(exc)}): is the server running, and is the URL right?"
        ) from exc
    click.echo(f"status: {sent.status}")
    click.echo(f"body: {sent.body.strip()}")
    click.echo(f"latency_ms: {sent.latency_ms:.1f}")
    click.echo(f"delivery: {sent.delivery}")
    if sent.status >= 400:
        sys.exit(1)
