"""Statement counting: what the database was sent while a block ran, for tests and the benchmark."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import peewee

from function.store.backends import Batch, unwrap


@dataclass
class StatementLog:
    """What ``count_statements`` saw: every statement sent, in order (BEGIN/COMMIT included), and the
    round trips they took (several statements share one on MySQL/TiDB, see ``StatementQueue``)."""

    statements: list[str] = field(default_factory=list)
    round_trips: int = 0

    @property
    def count(self) -> int:
        return len(self.statements)

    def matching(self, prefix: str) -> list[str]:
        """The statements starting with ``prefix`` (case-insensitive), e.g. ``"INSERT"``."""
        return [s for s in self.statements if s.lstrip().upper().startswith(prefix.upper())]


@contextlib.contextmanager
def count_statements(db: peewee.Database | peewee.DatabaseProxy) -> Iterator[StatementLog]:
    """Record every statement ``db`` sends (on any thread) while the block runs: a round-trip counter
    for tests and the benchmark. Connecting itself (handshake, pragmas) is not counted."""
    real = unwrap(db)
    seen = StatementLog()

    def hook(event: Any) -> None:
        seen.round_trips += 1
        if isinstance(event.params, Batch):
            seen.statements.extend(event.params.statements)
        else:
            seen.statements.append(event.sql)

    real.query_hooks.append(hook)
    try:
        yield seen
    finally:
        real.query_hooks.remove(hook)
