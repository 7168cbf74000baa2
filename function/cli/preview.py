"""``blog-api preview [PATH] [--port P]``: an author's own repository in the browser, as readers will see
it, re-synced on every save (``function.preview``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import click

from function.errors import ConfigError


@click.command("preview")
@click.argument("path", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="0: any free port"
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="address to listen on; another than loopback shows your drafts to your network",
)
@click.option(
    "--mermaid",
    "mermaid_file",
    default=None,
    type=click.Path(dir_okay=False, exists=True),
    help="a local mermaid.min.js for diagrams (default: loaded from its CDN by the page)",
)
def preview(path: Path, port: int, host: str, mermaid_file: str | None) -> None:
    """Preview the Zenn repository at PATH (default: the current directory): every article and book,
    drafts included, styled as readers see them, with its images, diagrams and math; an open page
    reloads itself when a file is saved. Nothing is written outside a temporary folder."""
    if not path.is_dir():
        raise ConfigError(f"{path}: no such folder (give your repository's root folder)")
    # Checked now, not when the watcher starts after the first sync. (Not imported here: the Lambda
    # package, which leaves the preview and its watcher out, holds this module too.)
    if importlib.util.find_spec("watchfiles") is None:
        raise ConfigError(
            "the preview needs the watchfiles package: pip install 'blog-api[preview]' "
            "(make preview installs it)"
        )
    from function.preview.server import serve

    mermaid = str(Path(mermaid_file).resolve()) if mermaid_file else None
    serve(path, host=host, port=port, mermaid_file=mermaid, say=_say)


def _say(line: str) -> None:
    click.echo(line)
    # A pipe buffers: whoever waits for the URL (a script, a test) gets each line as it is printed.
    sys.stdout.flush()
