"""``blog-api search status``: how much of each blog the search indexes hold."""

from __future__ import annotations

from collections.abc import Callable

import click

from function.cli.context import Context, pass_context
from function.errors import BlogApiError
from function.store.facade import PeeweeStore
from function.store.records import UserRecord

# One status line per index, for one user: the lexical index's is here; the semantic vectors' needs the
# settings (``function.embeddings.status.status_part``) and is added when the command runs.
StatusPart = Callable[[PeeweeStore, UserRecord], str]


def lexical_status(store: PeeweeStore, user: UserRecord) -> str:
    status = store.search.index_status(user.id)
    line = f"lexical: {status.indexed}/{status.articles} articles indexed"
    if status.missing or status.stale:
        line += (
            f" ({status.missing} missing, {status.stale} indexed from older text or an older tokeniser:"
            f" `blog-api sync --user {user.name} --rebuild` indexes them again)"
        )
    return line


STATUS_PARTS: tuple[StatusPart, ...] = (lexical_status,)


@click.group()
def search() -> None:
    """The search indexes of the blogs."""


@search.command("status")
@click.option("--user", "user_name", default=None, help="only this user (default: every user)")
@pass_context
def search_status(ctx: Context, user_name: str | None) -> None:
    """Per user, how many live articles each search index holds."""
    from function.embeddings.status import status_part

    parts = (*STATUS_PARTS, status_part(ctx.services().settings))
    with ctx.store() as store:
        if user_name is not None:
            user = store.users.get_user(user_name)
            if user is None:
                raise BlogApiError(f"no user named {user_name!r}")
            chosen = [user]
        else:
            chosen = store.users.list_users()
        for user in chosen:
            click.echo(user.name)
            for part in parts:
                click.echo(f"  {part(store, user)}")
