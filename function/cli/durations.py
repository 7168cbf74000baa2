"""Durations as the commands take them (``--since 2h``) and times as they print them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import click

_DURATION = re.compile(r"(\d+)([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``2h``, ``3d`` or a sum like ``1h30m``; ValueError for anything else."""
    cleaned = text.strip().lower()
    parts = _DURATION.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(f"{text!r} is not a duration like 90s, 30m, 2h or 3d")
    total = timedelta()
    for number, unit in parts:
        total += timedelta(**{_UNITS[unit]: int(number)})
    if total <= timedelta():
        raise ValueError("the duration must be more than zero")
    return total


class DurationType(click.ParamType[timedelta]):
    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> timedelta:
        if isinstance(value, timedelta):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


DURATION = DurationType()


def iso(value: datetime | None) -> str:
    """``2024-01-21T09:30:00.000Z``, or "-" for a time not known."""
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z") if value else "-"
