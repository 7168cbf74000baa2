"""``blog-api users``: the blog's users and the GitHub App installation and repository each follows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from function.cli.context import Context, pass_context
from function.errors import BlogApiError
from function.worker.maintenance import add_user, new_user_problem


@click.group()
def users() -> None:
    """Blog users and their GitHub App installations."""


def _user_line(user: Any) -> str:
    inst = user.installation_id if user.installation_id is not None else "-"
    repo = user.repository or "-"
    if user.repository and user.repository_id is None:
        repo += " (id pinned by its first push)"
    line = f"{user.name}\t{user.email}\tinstallation={inst}\trepository={repo}"
    return line + (f"\tsource={user.source}" if user.source else "")


@users.command("add")
@click.option("--name", required=True)
@click.option("--email", required=True)
@click.option("--installation-id", type=int, default=None)
@click.option(
    "--repository",
    default=None,
    help="owner/name of the one repository the blog follows; without it, pushes are skipped until "
    "`users set-repository` names one (or an installation granting exactly one repository does)",
)
@click.option("--if-missing", is_flag=True, help="succeed quietly when the user already exists")
@pass_context
def users_add(
    ctx: Context, name: str, email: str, installation_id: int | None, repository: str | None, if_missing: bool
) -> None:
    """Register a user."""
    _check_new_user(name, email, installation_id, repository)
    with ctx.store() as store:
        existing = store.users.get_user(name)
        if existing is not None and if_missing:
            click.echo(f"user exists: {_user_line(existing)}")
            return
        user = add_user(store.users, name, email, installation_id, repository)
    click.echo(f"added: {_user_line(user)}")
    if repository is None and ctx.services().settings.source_dir is None:
        click.echo(
            "note: no repository named: pushes are skipped until `blog-api users set-repository "
            f"--name {name} --repository owner/name` names it, or an installation granting exactly one "
            "repository does",
            err=True,
        )


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
        for user in store.users.list_users():
            click.echo(_user_line(user))


@users.command("set-installation")
@click.option("--name", required=True)
@click.option("--installation-id", type=int, required=True)
@pass_context
def users_set_installation(ctx: Context, name: str, installation_id: int) -> None:
    """Point a user at a GitHub App installation (fixes 'unknown installation')."""
    with ctx.store() as store:
        if store.users.get_user(name) is None:
            raise BlogApiError(f"no user named {name!r}: `blog-api users list` shows who exists")
        holder = store.users.find_user_by_installation(installation_id)
        if holder is not None and holder.name != name:
            raise BlogApiError(
                f"installation {installation_id} is already registered to user {holder.name!r}: "
                "one installation serves one user; check the id (the number at the end of the "
                "installation's settings URL)"
            )
        user = store.users.set_installation(name, installation_id)
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
        user = store.users.set_repository(name, repository)
    click.echo(f"updated: {_user_line(user)}")


@users.command("set-source")
@click.option("--name", required=True)
@click.option(
    "--source",
    required=True,
    help="dir:PATH (a folder: the repository's root or its articles folder) or github:OWNER/NAME",
)
@pass_context
def users_set_source(ctx: Context, name: str, source: str) -> None:
    """Bind a user to another source. Every sync from any other one is refused; the next sync from this
    one reconciles the articles with it (what it lacks is archived, held for a confirmation when that is
    most of the blog)."""
    binding, repository = _binding_named(source, ctx.services().settings.articles_dir)
    with ctx.store() as store:
        if store.users.get_user(name) is None:
            raise BlogApiError(f"no user named {name!r}: `blog-api users list` shows who exists")
        user = store.users.set_source(name, binding, repository)
    click.echo(f"updated: {_user_line(user)}")


def _binding_named(source: str, articles_dir: str) -> tuple[str, str | None]:
    """(the binding stored, the repository followed for GitHub) for ``--source``; BlogApiError in words."""
    from function.worker.sync.binding import DIR_PREFIX, GITHUB

    if source.startswith(DIR_PREFIX):
        from function.errors import SourceUnavailable
        from function.sources.folder import DirectorySource

        try:
            return DirectorySource(Path(source.removeprefix(DIR_PREFIX)), articles_dir).binding(), None
        except SourceUnavailable as exc:
            raise BlogApiError(f"--source {source}: {exc}") from None
    repository = source.removeprefix(f"{GITHUB}:")
    if not source.startswith(f"{GITHUB}:") or not re.fullmatch(
        r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository
    ):
        raise BlogApiError("--source must be dir:PATH (a folder) or github:OWNER/NAME (a repository)")
    return GITHUB, repository
