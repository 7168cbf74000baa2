"""Deleting stored images nobody needs any more, from the scheduled sweep.

An image is deleted once its file has been gone from the repository for the grace period and no article
or book still in the database (archived ones aside) points at it (a book at its cover): a front end's
cached page keeps working for a while, and an article that still shows it never loses it. Its object
goes only when no row of any user stores under the same key (the same bytes are one object)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from function.assets.port import AssetStore
from function.errors import AssetStoreError

log = logging.getLogger(__name__)


class CollectableRecords(Protocol):
    """What the sweep needs of ``function.store.asset_records.AssetRecords``."""

    def collectable(self, gone_before: datetime) -> list[tuple[int, str, str | None]]: ...
    def forget(self, rows: Sequence[tuple[int, str]]) -> None: ...
    def keys_in_use(self, keys: Iterable[str]) -> set[str]: ...


@dataclass
class CollectReport:
    forgotten: int = 0  # rows removed
    deleted: list[str] = field(default_factory=list)  # objects removed from the store
    errors: list[str] = field(default_factory=list)


def collect_assets(
    records: CollectableRecords, store: AssetStore, now: datetime, grace: timedelta
) -> CollectReport:
    """Forget the rows past ``grace`` that nothing points at, then delete the objects no row uses.
    A store that refuses a deletion is logged; the object stays (it costs storage, never a reader)."""
    rows = records.collectable(now - grace)
    report = CollectReport()
    if not rows:
        return report
    records.forget([(user, path) for user, path, _ in rows])
    report.forgotten = len(rows)
    keys = {key for _, _, key in rows if key is not None}
    for key in sorted(keys - records.keys_in_use(keys)):
        try:
            store.delete(key)
        except AssetStoreError as exc:
            report.errors.append(str(exc))
            continue
        report.deleted.append(key)
    log.info(
        "Collected images",
        extra={"forgotten": report.forgotten, "deleted": len(report.deleted), "errors": len(report.errors)},
    )
    return report


def collect_unused_images(services: Any, now: datetime) -> CollectReport | None:
    """The scheduled sweep's part for the images (``services``: ``function.services.Services``): a
    failure is logged and left for the next sweep, and never stops the rest of the sweep."""
    from function.store.asset_records import AssetRecords

    grace = timedelta(days=services.settings.asset_grace_days)
    try:
        with services.store() as store:
            return collect_assets(AssetRecords(store.db), services.asset_store(), now, grace)
    except Exception:
        log.exception("Collecting unused images failed; the next sweep tries again")
        return None
