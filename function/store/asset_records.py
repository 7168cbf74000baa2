"""The stored images' rows (``assets``) and what each article points at (``asset_references``).

Read once per sync (two SELECTs) and written once at its end, in one transaction (more when it holds
more than ``ASSET_TRANSACTION_MAX_BYTES`` of rows); the tables are created on first use, so a database
set up before they existed needs no migration step.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import peewee

from function.store.backends import unwrap
from function.store.batching import TRANSACTION_MAX_BYTES
from function.store.bounds import groups, row_bytes
from function.store.models import Article, Asset, AssetReference, Book, BookChapter, to_naive_utc

# Keys per IN (...) and rows per INSERT: far below SQLite's bound-parameter limit.
_CHUNK = 500
# Rows written per transaction, in bytes (``function.store.batching``: well under the bound of any write
# transaction). An image's row is a few hundred bytes: tens of thousands of images fit in one.
ASSET_TRANSACTION_MAX_BYTES = TRANSACTION_MAX_BYTES
# A refused image's reason, as stored.
_PROBLEM_CHARS = 2000
# An asset row's columns that are not text (size, times), and its index entries with their keys.
_ASSET_FIXED_BYTES = 160
_INDEX_BYTES = 256


@dataclass(frozen=True)
class StoredAsset:
    """One repository file's row: ``key`` None means refused (``problem`` says why)."""

    path: str
    blob_sha: str
    key: str | None
    sha256: str | None = None
    size: int | None = None
    content_type: str | None = None
    problem: str | None = None
    gone_at: datetime | None = None


References = Mapping[str, Mapping[str, str | None]]  # slug -> {repository path: blob sha or None}


class AssetRecords:
    def __init__(self, db: peewee.Database | peewee.DatabaseProxy) -> None:
        self._db = unwrap(db)
        self._ready = False

    def _ensure_tables(self) -> None:
        """Create the tables a database set up before them lacks (checked once per instance)."""
        if not self._ready:
            for model in (Asset, AssetReference):
                if not self._db.table_exists(model._meta.table_name):
                    peewee.SchemaManager(model, self._db).create_all(safe=True)
            self._ready = True

    def load(self, user_id: int) -> tuple[dict[str, StoredAsset], dict[str, dict[str, str | None]]]:
        """Every asset row of the user by path, and each article's references (slug → {path: the blob
        it was rendered with, or None}): one statement (a UNION ALL), read at the start of every sync.
        The tables are only checked for, and made, when that statement finds them missing."""
        try:
            rows = list(self._union(user_id))
        except peewee.DatabaseError:
            if self._ready:
                raise
            self._ensure_tables()
            rows = list(self._union(user_id))
        self._ready = True
        return _from_rows(rows)

    def _union(self, user_id: int) -> peewee.CompoundSelectQuery:
        null = peewee.SQL("NULL")
        assets = Asset.select(
            peewee.Value("a"),
            Asset.path,
            Asset.blob_sha,
            Asset.key,
            Asset.sha256,
            Asset.size,
            Asset.content_type,
            Asset.problem,
            Asset.gone_at,
        ).where(Asset.user == user_id)
        references = AssetReference.select(
            peewee.Value("r"), AssetReference.slug, AssetReference.paths, null, null, null, null, null, null
        ).where(AssetReference.user == user_id)
        union: peewee.CompoundSelectQuery = (assets + references).tuples().bind(self._db)
        return union

    def load_assets(self, user_id: int) -> dict[str, StoredAsset]:
        """Every asset row of the user, by path."""
        return self.load(user_id)[0]

    def load_references(self, user_id: int) -> dict[str, dict[str, str | None]]:
        """slug -> {path: blob sha the article was rendered with, or None (missing then)}."""
        return self.load(user_id)[1]

    def save(
        self,
        user_id: int,
        assets: Sequence[StoredAsset],
        references: References,
        *,
        gone: Iterable[str] = (),
        now: datetime,
        max_bytes: int = ASSET_TRANSACTION_MAX_BYTES,
    ) -> None:
        """Write ``assets`` (replacing the rows of their paths, seen now), mark the ``gone`` paths as left
        the repository (from now, unless marked before), and replace the references of the slugs in
        ``references`` (an empty mapping removes a slug's row).

        In transactions of at most ``max_bytes`` of rows (one, for any ordinary push): each row written
        is a fact on its own (this file is stored under this key, that one is gone, this article points
        at these files), so a transaction that fails after others committed leaves true rows, and the
        next sync writes the rest."""
        self._ensure_tables()
        now = to_naive_utc(now)
        pieces: list[_Piece] = [("asset", _asset_row(user_id, a, now)) for a in assets]
        pieces += [("gone", path) for path in gone]
        pieces += [("references", (slug, dict(paths))) for slug, paths in references.items()]
        for group in groups(pieces, max_items=len(pieces), weights=[(_piece_bytes, max_bytes)]):
            with self._db.atomic():
                self._write(user_id, group, now)

    def _write(self, user_id: int, pieces: Sequence[_Piece], now: datetime) -> None:
        rows = [piece for kind, piece in pieces if kind == "asset"]
        gone = [piece for kind, piece in pieces if kind == "gone"]
        references = dict(piece for kind, piece in pieces if kind == "references")
        for chunk in _chunks([row["path"] for row in rows]):
            Asset.delete().where((Asset.user == user_id) & Asset.path.in_(chunk)).bind(self._db).execute()
        for chunk in _chunks(rows):
            Asset.insert_many(chunk).bind(self._db).execute()
        for chunk in _chunks(gone):
            (
                Asset.update(gone_at=now)
                .where((Asset.user == user_id) & Asset.path.in_(chunk) & Asset.gone_at.is_null())
                .bind(self._db)
                .execute()
            )
        for chunk in _chunks(list(references)):
            (
                AssetReference.delete()
                .where((AssetReference.user == user_id) & AssetReference.slug.in_(chunk))
                .bind(self._db)
                .execute()
            )
        ref_rows = [
            {"user": user_id, "slug": slug, "paths": json.dumps(paths, sort_keys=True)}
            for slug, paths in references.items()
            if paths
        ]
        for chunk in _chunks(ref_rows):
            AssetReference.insert_many(chunk).bind(self._db).execute()

    def mark_present(self, user_id: int, paths: Iterable[str]) -> None:
        """Paths that are back in the repository (at the same blob) are no longer gone."""
        self._ensure_tables()
        for chunk in _chunks(list(paths)):
            (
                Asset.update(gone_at=None)
                .where((Asset.user == user_id) & Asset.path.in_(chunk))
                .bind(self._db)
                .execute()
            )

    def collectable(self, gone_before: datetime) -> list[tuple[int, str, str | None]]:
        """(user id, path, key) of the rows gone from their repository before ``gone_before`` that no
        article or book still in the database (archived ones aside) points at."""
        self._ensure_tables()
        query: Any = (
            Asset.select(Asset.user, Asset.path, Asset.key)
            .where(Asset.gone_at.is_null(False) & (Asset.gone_at < to_naive_utc(gone_before)))
            .tuples()
            .bind(self._db)
        )
        candidates = [(int(user), path, key) for user, path, key in query]
        users = sorted({user for user, _, _ in candidates})
        referenced: set[tuple[int, str]] = set()
        for chunk in _chunks(users):
            rows: Any = (
                AssetReference.select(AssetReference.user, AssetReference.paths)
                .join(
                    Article,
                    on=(Article.user == AssetReference.user) & (Article.slug == AssetReference.slug),
                )
                .where(AssetReference.user.in_(chunk) & (Article.archived == False))  # noqa: E712
                .tuples()
                .bind(self._db)
            )
            for user, paths in rows:
                referenced.update((int(user), path) for path in json.loads(paths))
            # A book's cover is referenced under its config path (``function.worker.sync.books``).
            covers: Any = (
                AssetReference.select(AssetReference.user, AssetReference.paths)
                .join(
                    Book,
                    on=(Book.user == AssetReference.user) & (Book.config_path == AssetReference.slug),
                )
                .where(AssetReference.user.in_(chunk) & (Book.archived == False))  # noqa: E712
                .tuples()
                .bind(self._db)
            )
            # A chapter's images are referenced under its path.
            chapters: Any = (
                AssetReference.select(AssetReference.user, AssetReference.paths)
                .join(BookChapter, on=(BookChapter.path == AssetReference.slug))
                .join(Book, on=(Book.id == BookChapter.book) & (Book.user == AssetReference.user))
                .where(AssetReference.user.in_(chunk) & (Book.archived == False))  # noqa: E712
                .tuples()
                .bind(self._db)
            )
            for user, paths in [*covers, *chapters]:
                referenced.update((int(user), path) for path in json.loads(paths))
        return [c for c in candidates if (c[0], c[1]) not in referenced]

    def forget(self, rows: Sequence[tuple[int, str]]) -> None:
        """Delete the rows of these (user id, path) pairs."""
        self._ensure_tables()
        with self._db.atomic():
            for user, path in rows:
                Asset.delete().where((Asset.user == user) & (Asset.path == path)).bind(self._db).execute()

    def keys_in_use(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` some row (any user's) still stores under."""
        self._ensure_tables()
        used: set[str] = set()
        for chunk in _chunks(sorted(set(keys))):
            query: Any = (
                Asset.select(Asset.key).where(Asset.key.in_(chunk)).distinct().tuples().bind(self._db)
            )
            used.update(key for (key,) in query)
        return used


_Piece = tuple[str, Any]  # ("asset", row) | ("gone", path) | ("references", (slug, paths))


def _asset_row(user_id: int, asset: StoredAsset, now: datetime) -> dict[str, Any]:
    return {
        "user": user_id,
        "path": asset.path,
        "blob_sha": asset.blob_sha,
        "key": asset.key,
        "sha256": asset.sha256,
        "size": asset.size,
        "content_type": asset.content_type,
        "problem": asset.problem[:_PROBLEM_CHARS] if asset.problem else None,
        "seen_at": now,
        "gone_at": None,
    }


def _piece_bytes(piece: _Piece) -> int:
    """What a piece writes, as TiDB counts it (the whole row and its index entries), erring high."""
    kind, value = piece
    if kind == "asset":
        return row_bytes(value) + _INDEX_BYTES
    if kind == "gone":
        # The row is rewritten whole to set the time, and its problem text is not known here.
        return len(value.encode()) + 4 * _PROBLEM_CHARS + _ASSET_FIXED_BYTES + _INDEX_BYTES
    slug, paths = value
    return len(slug.encode()) + len(json.dumps(paths).encode()) + _INDEX_BYTES


def _chunks(items: Sequence[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


def _from_rows(
    rows: Iterable[tuple[Any, ...]],
) -> tuple[dict[str, StoredAsset], dict[str, dict[str, str | None]]]:
    """``load``'s answer from the rows of its statement."""
    assets: dict[str, StoredAsset] = {}
    references: dict[str, dict[str, str | None]] = {}
    for kind, name, value, key, sha256, size, content_type, problem, gone_at in rows:
        if kind == "r":
            references[name] = json.loads(value)
        else:
            # The backend's own datetime conversion (SQLite hands back text); peewee is untyped.
            to_datetime = Asset.gone_at.python_value
            gone = to_datetime(gone_at) if gone_at is not None else None  # type: ignore[no-untyped-call]
            size = int(size) if size is not None else None
            assets[name] = StoredAsset(name, value, key, sha256, size, content_type, problem, gone)
    return assets, references
