"""``blog-api deliveries``: the recent deliveries as the database recorded them, one line each."""

from __future__ import annotations

import unicodedata
from typing import Any

import click

from function.cli.context import Context, pass_context


@click.command("deliveries")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@pass_context
def deliveries(ctx: Context, limit: int) -> None:
    """Recent deliveries: id, event, received → finished, counts, what changed, outcome (and whether a
    retry may pass), failed paths."""
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
            f"{printable(row.delivery_id)}\t{printable(row.event)}\t"
            f"{row.received_at.isoformat(timespec='milliseconds')}\t{finished}\t"
            f"{duration}\t{row.processed}/{row.succeeded}/{row.failed}\t{_changes(row)}\t{_outcome(row)}"
            + (f"\t{printable(row.error)}" if row.error else "")
        )


def printable(text: str) -> str:
    """``text`` without control characters (shown as ``?``): what a delivery recorded came, in part, from
    a sender, and an escape sequence would rewrite the operator's terminal, a tab shift the columns."""
    return "".join("?" if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)


def _outcome(row: Any) -> str:
    """The outcome, and ``(retryable)`` when the record says a retry may pass (the worker then syncs the
    same head again)."""
    return printable(row.outcome) + (" (retryable)" if row.retryable else "")


def _changes(row: Any) -> str:
    """``written/archived/unchanged``; "-" for a count a delivery recorded before it was kept."""

    def count(value: int | None) -> str:
        return "-" if value is None else str(value)

    return f"{count(row.written)}/{row.archived}/{count(row.unchanged)}"
