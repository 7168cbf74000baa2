"""``blog-api sync``: a full scan of one user's repository now, with a progress bar on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING

import click

from function.cli.context import Context, pass_context
from function.cli.text_logs import reported_by_command
from function.errors import BlogApiError, ConfigError

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar


@click.command("sync")
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
        user = store.users.get_user(user_name)
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
    from function.sources.folder import DirectorySource

    source = services.source()
    if isinstance(source, DirectorySource):
        # Which folder is read as what: the root of a repository, found from its articles/ folder, or a
        # bare folder of articles (then no books or images).
        click.echo(source.layout().described)
    # The bar is entered on the first report that knows the total, and left with the sync, whatever
    # way the sync ends.
    # The worker's log lines for one file's failure or warning: the summary below prints each of them,
    # with its path and reason, so they are not printed a second time as log lines. (Imported here: the
    # worker is only loaded by the commands that run it.)
    from function.worker.sync.summary import FILE_FAILED, FILE_WARNING

    printed_below = frozenset({FILE_FAILED, FILE_WARNING})
    with ExitStack() as bars, ctx.store() as store, reported_by_command(printed_below):
        summary = services.worker(store).sync_user(
            user_name,
            branch=branch or services.settings.article_branch,
            repository=repository,
            progress=_progress_on(bars, interactive=sys.stdout.isatty()),
            rebuild=rebuild,
        )
    told = services.after_sync(summary, user_name=user_name)
    click.echo(
        f"synced {user_name}: processed={summary.processed} succeeded={summary.succeeded} "
        f"failed={summary.failed} fetched={summary.fetched} archived={summary.archived} "
        f"warnings={len(summary.warnings)} head={summary.head_sha}"
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


def _progress_on(bars: ExitStack, *, interactive: bool) -> Callable[[int, int], None]:
    """The worker's ``progress(done, total)``: a bar on a terminal, entered into ``bars``; else nothing."""
    bar: ProgressBar[int] | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if not interactive or total == 0:
            return
        if bar is None:
            bar = bars.enter_context(click.progressbar(length=total, label="fetching changed articles"))
        bar.update(done - bar.pos)

    return progress
