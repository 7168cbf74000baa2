"""Copying a repository's images to the asset store, in the same pass as its articles.

Per sync (``AssetSync.start`` → ``AssetPass``): the stored rows and each article's references are read
once; ``prepare`` stores the files of the images folder whose blob is new (a blob stored before, under
any path, is never downloaded again: a renamed image costs nothing); while articles render, each image
source is resolved through ``images_for`` (a file outside the images folder that an article points at is
stored then); ``finish`` writes the rows and references in one transaction. A sync whose tree has no new
image blob makes no request to GitHub or to the store for images.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from function.articles.images import stored_reference
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import detect, refusal
from function.assets.port import AssetStore
from function.assets.references import repository_paths
from function.errors import AssetStoreError
from function.sources.port import FetchFailure, FetchResult, RepoFile, RepoRef, Snapshot
from function.store.asset_records import References, StoredAsset

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_PUSH_MAX_BYTES = 100 * 1024 * 1024
# Images fetched per request batch: their bytes are held until stored, so a few at a time.
FETCH_BATCH = 8


class AssetRecordsPort(Protocol):
    """What the sync needs of ``function.store.asset_records.AssetRecords``."""

    def load(
        self, user_id: int
    ) -> tuple[Mapping[str, StoredAsset], Mapping[str, Mapping[str, str | None]]]: ...
    def save(
        self,
        user_id: int,
        assets: Sequence[StoredAsset],
        references: References,
        *,
        gone: Sequence[str] = (),
        now: datetime,
    ) -> None: ...


class Fetcher(Protocol):
    """The article source's ``fetch``, on a source whose per-file cap is the images' own."""

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]: ...


class AssetSync:
    """Configured once; ``start`` begins one user's pass (on the thread that holds the database)."""

    def __init__(
        self,
        records: AssetRecordsPort,
        store: AssetStore,
        fetcher: Fetcher,
        *,
        images_dir: str = "images",
        max_bytes: int = DEFAULT_MAX_BYTES,
        push_max_bytes: int = DEFAULT_PUSH_MAX_BYTES,
    ) -> None:
        self.records = records
        self.store = store
        self.fetcher = fetcher
        self.images_dir = images_dir.strip("/")
        self.max_bytes = max_bytes
        self.push_max_bytes = push_max_bytes

    def start(self, user_id: int) -> AssetPass:
        """One user's pass: their rows and references, read now (one SELECT)."""
        assets, references = self.records.load(user_id)
        return AssetPass(self, user_id, assets, references)


@dataclass
class ArticleImages:
    """One article's image sources as they resolve: its references (path → the blob it was rendered
    with, None when the file was missing or not stored yet) and its warnings."""

    article_path: str
    images: AssetPass
    paths: dict[str, str | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def resolve(self, src: str) -> str | None:
        """The stored reference (``asset:<key>``, a URL only when served) for ``src``, or None to leave
        it as written (a URL, or a file not served)."""
        return self.images.resolve(self, src)


class AssetPass:
    """One sync's images (see the module docstring). Thread-safe: the worker may read on two threads."""

    def __init__(
        self,
        sync: AssetSync,
        user_id: int,
        known: Mapping[str, StoredAsset],
        references: Mapping[str, Mapping[str, str | None]],
    ) -> None:
        self._sync = sync
        self.user_id = user_id
        self.known = dict(known)
        self.references = {slug: dict(paths) for slug, paths in references.items()}
        self.listing: dict[str, RepoFile] = {}
        self.stored: dict[str, StoredAsset] = {}  # written by ``finish``: new blobs, renames, refusals
        self.changed_references: dict[str, dict[str, str | None]] = {}
        self.failed: dict[str, str] = {}  # path -> why it could not be stored now (retried next sync)
        self.downloaded = 0  # files downloaded
        self.downloaded_bytes = 0
        self.uploaded = 0  # objects put in the store
        self._repo: RepoRef | None = None
        self._snapshot: Snapshot | None = None
        self._lock = threading.RLock()
        # A blob stored before, under any path still in the repository, is never downloaded again.
        self._by_blob = {row.blob_sha: row for row in self.known.values() if row.gone_at is None}

    # -- planning --------------------------------------------------------------------------------

    def stale_slugs(self, snapshot: Snapshot) -> set[str]:
        """Articles rendered with an image whose file has changed (or appeared, or gone) since: they
        are rendered again, so their HTML points at the new key."""
        listing = {f.path: f.sha for f in snapshot.others}
        return {
            slug
            for slug, paths in self.references.items()
            if any(listing.get(path) != sha for path, sha in paths.items())
        }

    def prepare(self, repo: RepoRef, snapshot: Snapshot) -> None:
        """Store the images folder's new blobs (before any article renders, so they resolve)."""
        with self._lock:
            if self._snapshot is snapshot:
                return  # prepared already (the first chunk was read ahead)
            self._repo, self._snapshot = repo, snapshot
            self.listing = {f.path: f for f in snapshot.others}
            prefix = f"{self._sync.images_dir}/"
            self._store_files([f for f in snapshot.others if f.path.startswith(prefix)])

    # -- resolving -------------------------------------------------------------------------------

    def images_for(self, article_path: str) -> ArticleImages:
        return ArticleImages(article_path, self)

    def resolve(self, article: ArticleImages, src: str) -> str | None:
        """The asset URL for ``src`` as the article writes it, or None (left as written). Every warning
        names the image as the article writes it, and the repository path where that helps."""
        candidates = repository_paths(src, article.article_path)
        if not candidates:
            return None  # a URL: left as written
        with self._lock:
            path = next((c for c in candidates if c in self.listing), None)
            if path is None:
                return self._resolve_gone(article, src, candidates)
            file = self.listing[path]
            row = self._current(file)
            if row is None and path not in self.failed:
                self._store_files([file])
                row = self._current(file)
            if row is None:
                article.paths[path] = None
                reason = self.failed.get(path, "not stored")
                article.warnings.append(f"image {src}: not stored yet ({reason}); the next sync tries again")
                return None
            article.paths[path] = file.sha
            if row.key is None:
                article.warnings.append(f"image {src}: {row.problem}; left as written")
                return None
            return stored_reference(row.key)

    def _resolve_gone(self, article: ArticleImages, src: str, candidates: Sequence[str]) -> str | None:
        for path in candidates:
            row = self.known.get(path)
            if row is not None and row.key is not None:
                # Kept while an article points at it (the sweep never deletes it then).
                article.paths[path] = None
                article.warnings.append(
                    f"image {src}: no longer in the repository ({path}); the stored copy is served "
                    "until the article stops pointing at it"
                )
                return stored_reference(row.key)
        article.paths[candidates[0]] = None
        looked = " or ".join(candidates)
        article.warnings.append(f"image {src}: no such file in the repository ({looked}); left as written")
        return None

    def record(self, slug: str, article: ArticleImages) -> None:
        """The references of an article that was parsed (and is written): replaced at ``finish``."""
        with self._lock:
            if self.references.get(slug, {}) != article.paths:
                self.changed_references[slug] = dict(article.paths)
                self.references[slug] = dict(article.paths)

    # -- storing ---------------------------------------------------------------------------------

    def _current(self, file: RepoFile) -> StoredAsset | None:
        """The row for ``file`` at its blob, if it is stored (or refused) already."""
        row = self.stored.get(file.path) or self.known.get(file.path)
        if row is not None and row.blob_sha == file.sha:
            return row
        return None

    def _store_files(self, files: Sequence[RepoFile]) -> None:
        downloads = []
        for file in files:
            if self._current(file) is not None:
                continue
            same = self._by_blob.get(file.sha)
            if same is not None:
                self.stored[file.path] = replace(same, path=file.path, gone_at=None)  # renamed or copied
            elif file.size is not None and file.size > self._sync.max_bytes:
                self._refuse(file, self._too_big(file.size), file.size)
            else:
                downloads.append(file)
        for start in range(0, len(downloads), FETCH_BATCH):
            batch = []
            planned = self.downloaded_bytes  # the listing's sizes: the cap holds before any download
            for file in downloads[start : start + FETCH_BATCH]:
                if planned + (file.size or 0) > self._sync.push_max_bytes:
                    self.failed[file.path] = f"over the {self._sync.push_max_bytes}-byte limit for one sync"
                else:
                    planned += file.size or 0
                    batch.append(file)
            if batch:
                self._download(batch)

    def _download(self, files: Sequence[RepoFile]) -> None:
        assert self._repo is not None and self._snapshot is not None  # set by prepare
        by_path = {f.path: f for f in files}
        for result in self._sync.fetcher.fetch(self._repo, self._snapshot, files):
            file = by_path[result.path]
            if isinstance(result, FetchFailure):
                if result.retryable:
                    self.failed[file.path] = result.message
                else:
                    # Too big while streaming (no size in the listing), or gone: the same at this blob.
                    self._refuse(file, self._download_problem(result.message, file), None)
                continue
            self.downloaded += 1
            self.downloaded_bytes += len(result.content)
            self._store_bytes(file, result.content)

    def _store_bytes(self, file: RepoFile, data: bytes) -> None:
        if len(data) > self._sync.max_bytes:
            self._refuse(file, self._too_big(len(data)), len(data))
            return
        kind = detect(data)
        if kind is None:
            self._refuse(file, refusal(data), len(data))
            return
        sha256 = content_sha256(data)
        key = asset_key(sha256, kind)
        try:
            self._sync.store.put(key, data, kind.content_type)
        except AssetStoreError as exc:
            self.failed[file.path] = str(exc)
            return
        self.uploaded += 1
        row = StoredAsset(file.path, file.sha, key, sha256, len(data), kind.content_type)
        self.stored[file.path] = row
        self._by_blob[file.sha] = row

    def _refuse(self, file: RepoFile, problem: str, size: int | None) -> None:
        self.stored[file.path] = StoredAsset(file.path, file.sha, None, size=size, problem=problem)

    def _too_big(self, size: int) -> str:
        return f"{size} bytes, over the {self._sync.max_bytes}-byte limit for an image"

    def _download_problem(self, message: str, file: RepoFile) -> str:
        if "limit" in message:
            return f"over the {self._sync.max_bytes}-byte limit for an image"
        return message

    # -- finishing -------------------------------------------------------------------------------

    def finish(self, now: datetime, *, complete: bool) -> None:
        """Write what this pass stored and the changed references (one transaction; none when nothing
        changed); from a complete listing, mark the rows whose file is gone, and un-mark those back.

        It may be called again (the books' covers resolve after the articles' finish): each call writes
        only what changed since the one before."""
        with self._lock:
            for path, row in self.known.items():
                file = self.listing.get(path)
                if row.gone_at is not None and file is not None and file.sha == row.blob_sha:
                    self.stored.setdefault(path, row)  # back in the repository
            gone = []
            if complete:
                gone = [p for p, row in self.known.items() if p not in self.listing and row.gone_at is None]
            if self.stored or gone or self.changed_references:
                self._sync.records.save(
                    self.user_id, list(self.stored.values()), self.changed_references, gone=gone, now=now
                )
            written = {path: replace(row, gone_at=None) for path, row in self.stored.items()}
            self.known.update(written)
            self.known.update({path: replace(self.known[path], gone_at=now) for path in gone})
            self.stored.clear()
            self.changed_references.clear()
        if self.downloaded or self.failed or gone:
            log.info(
                "Synced images",
                extra={
                    "downloaded": self.downloaded,
                    "downloaded_bytes": self.downloaded_bytes,
                    "uploaded": self.uploaded,
                    "gone": len(gone),
                    "not_stored": len(self.failed),
                },
            )
