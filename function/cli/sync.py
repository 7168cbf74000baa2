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

    from function.worker.sync.summary import SyncSummary


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
@click.option(
    "--confirm-removal",
    is_flag=True,
    help="carry out a sync that would archive most of the blog (the safety valve holds it otherwise)",
)
@pass_context
def sync(
    ctx: Context,
    user_name: str,
    branch: str | None,
    repository: str | None,
    rebuild: bool,
    confirm_removal: bool,
) -> None:
    """Full scan now: reconcile every article of the user's repository.

    Exit status: 0 in sync; 2 some files failed (left as they were); 3 partial (a book is served without
    some chapters, each named); 4 held (it would archive most of the blog: nothing was written)."""
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
            confirm_removal=confirm_removal,
        )
    told = services.after_sync(summary, user_name=user_name)
    if summary.held is not None:
        click.echo(f"held {user_name}: {summary.held.message}")
        sys.exit(HELD)
    _print_summary(user_name, summary)
    if told:
        click.echo(f"  webhooks: told {len(told)} endpoint(s); `blog-api hooks deliveries` shows the answers")
    if summary.failed:
        sys.exit(FAILED_FILES)
    if summary.incomplete:
        sys.exit(PARTIAL)


# Exit statuses besides 0 (in sync) and 1 (the one-line error).
FAILED_FILES = 2
PARTIAL = 3
HELD = 4


def _print_summary(user_name: str, summary: SyncSummary) -> None:
    """The counts (articles and books apart, what was written and what was already in sync), then each
    failure and warning with its path."""
    click.echo(
        f"synced {user_name}: processed={summary.processed} succeeded={summary.succeeded} "
        f"failed={summary.failed} fetched={summary.fetched} written={summary.written} "
        f"unchanged={summary.unchanged} archived={summary.archived} warnings={len(summary.warnings)} "
        f"head={summary.head_sha}"
    )
    failed_books = sum(1 for f in summary.failures if f.path.startswith("books/"))
    articles = summary.processed - summary.books
    drafts = summary.drafts - summary.book_drafts
    # Drafts are not served: "0 published of 41" must not pass for a clean sync.
    published = summary.succeeded - (summary.books - failed_books) - drafts
    click.echo(f"  {articles} articles: {published} published, {drafts} drafts (not served)")
    if summary.books:
        books = summary.books - failed_books - summary.book_drafts
        incomplete = (
            f"; served without some chapters: {', '.join(summary.incomplete)}" if summary.incomplete else ""
        )
        click.echo(f"  {summary.books} books: {books} published, {summary.book_drafts} drafts{incomplete}")
    for failure in summary.failures:
        again = " (unchanged since it last failed; not fetched again)" if failure.remembered else ""
        click.echo(f"  failed {failure.path}: {failure.message}{again}")
    for warning in summary.warnings:
        click.echo(f"  warning {warning.path}: {warning.message}")


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
