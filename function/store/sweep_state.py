"""Where the redelivery sweep stopped: one row per sweep, so a failed attempt is redelivered once.

GitHub numbers hook deliveries with increasing ids, so "every attempt up to id N has been looked at" is
one number; the time of that attempt lets a sweep after a long pause look back to it.
"""

from __future__ import annotations

import peewee

from function.store.base import StoreBase
from function.store.batching import upsert_many
from function.store.connection import Session
from function.store.models import SweepState, to_naive_utc
from function.store.records import Watermark

GITHUB_APP_SWEEP = "github-app-hook"


class SweepStateStore(StoreBase):
    """Loads and saves one sweep's watermark (``store.sweep_state()``). The table is created on first
    use, so a database set up before this table existed needs no migration step."""

    def __init__(
        self, db: Session | peewee.Database | peewee.DatabaseProxy, name: str = GITHUB_APP_SWEEP
    ) -> None:
        super().__init__(db)
        self._name = name
        self._ready = False

    def _ensure_table(self) -> None:
        if not self._ready:
            if not self._db.table_exists(SweepState._meta.table_name):
                peewee.SchemaManager(SweepState, self._db).create_all(safe=True)
            self._ready = True

    def load(self) -> Watermark | None:
        self._ensure_table()
        row = (
            SweepState.select(
                SweepState.last_delivery_id, SweepState.last_delivered_at, SweepState.last_run_at
            )
            .where(SweepState.name == self._name)
            .tuples()
            .bind(self._db)
            .first()
        )
        return Watermark(int(row[0]), row[1], row[2]) if row else None

    def save(self, mark: Watermark) -> None:
        self._ensure_table()
        row = {
            "name": self._name,
            "last_delivery_id": mark.delivery_id,
            "last_delivered_at": to_naive_utc(mark.delivered_at),
            "last_run_at": to_naive_utc(mark.run_at),
        }
        upsert_many(
            self._db,
            SweepState,
            [row],
            conflict_target=[SweepState.name],
            preserve=[SweepState.last_delivery_id, SweepState.last_delivered_at, SweepState.last_run_at],
        )
