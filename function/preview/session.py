"""One preview: the author's folder synced into a throwaway store, again after every change.

It is production's wiring with the preview's settings: ``ARTICLE_SOURCE=dir:<folder>``, a SQLite file and
an asset folder in a scratch directory, the app's own ``/assets`` for images, a random webhook secret
nobody needs to know, and no GitHub App. ``Services`` builds the source, the store and the worker from
them exactly as it does on a server; a sync is ``Worker.sync_user``, as ``blog-api sync`` runs it.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from function.errors import (
    AssetStoreError,
    BlogApiError,
    ConfigError,
    DatabaseUnavailable,
    LockTimeout,
    SourcePermanentError,
    SourceUnavailable,
    StoreStepFailed,
)
from function.preview.problems import Problems
from function.services import Services
from function.settings import Settings
from function.store.author_reads import AuthorReads
from shared.runtime_settings import variable

log = logging.getLogger(__name__)

# The one user of a preview's store: the author.
AUTHOR = "author"

# Settings an author may set for the preview as for a server: how their repository is read and rendered.
# Nothing else of the environment is read, so a DATABASE_URL or an AWS variable in the shell can never
# point the preview at a real database or bucket.
PASSED_THROUGH = tuple(
    variable(name)
    for name in (
        "articles_dir",
        "article_timezone",
        "allow_raw_html",
        "images_dir",
        "asset_max_bytes",
        "log_level",
    )
)


# What can stop a whole sync of a local folder (a file's own problem never does): shown, then retried at
# the next save.
_SYNC_ERRORS = (
    AssetStoreError,
    BlogApiError,
    ConfigError,
    DatabaseUnavailable,
    LockTimeout,
    OSError,
    SourcePermanentError,
    SourceUnavailable,
    StoreStepFailed,
)


@dataclass(frozen=True)
class SyncOutcome:
    """What one re-sync did, for the terminal line and for deciding whether pages must reload."""

    changed: bool  # something readers or the author see is different
    line: str


def preview_settings(folder: Path, scratch: Path, environ: Mapping[str, str]) -> Settings:
    """The settings of a preview of ``folder`` whose database and images live in ``scratch``."""
    # Quiet by default: the terminal shows one line per sync, the pages show each file's problems.
    values = {variable("log_level"): "WARNING"}
    values.update({name: environ[name] for name in PASSED_THROUGH if environ.get(name)})
    values.update(
        {
            variable("webhook_secret"): secrets.token_hex(32),
            variable("article_source"): f"dir:{folder}",
            variable("database_url"): f"sqlite:///{scratch / 'preview.db'}",
            variable("asset_dir"): str(scratch / "assets"),
            variable("asset_url"): "/assets",
            # One process: the preview's syncs are small, and render processes would outlive a Ctrl+C.
            variable("render_processes"): "1",
        }
    )
    return Settings.from_env(values, require_source=True)


class Preview:
    """The folder, its store, the problems of its last sync and a version that moves when pages must
    reload."""

    def __init__(self, folder: Path, scratch: Path, environ: Mapping[str, str]) -> None:
        self.folder = folder.resolve()
        self.services = Services(preview_settings(self.folder, scratch, environ))
        self.problems = Problems()
        self._version = 0
        self._changed = threading.Condition()
        self._sync_lock = threading.Lock()
        self._head: str | None = None
        self._synced_once = False

    @property
    def version(self) -> int:
        with self._changed:
            return self._version

    def wait_for_change(self, seen: int, timeout: float) -> int:
        """The version once it differs from ``seen``, or the same after ``timeout`` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != seen, timeout=timeout)
            return self._version

    def create_store(self) -> None:
        """The tables and the author, in the scratch database."""
        from function.worker.maintenance import initialise

        # Migrates a scratch database made by an earlier run, and refuses what no step mends.
        initialise(self.services.database())
        with self.services.store() as store:
            if store.get_user(AUTHOR) is None:
                store.add_user(AUTHOR, "author@localhost", None)

    def sync(self, changed: Iterable[str] | None = None) -> SyncOutcome:
        """Sync the folder now; ``changed``: the repository paths that changed since the last sync,
        whose warnings are replaced (a sync reads only changed files, so the others' warnings are
        kept; the first sync reads every file). Never raises for the folder's or a file's problems:
        they are kept for the pages."""
        with self._sync_lock:
            before = self.problems.everything(), self.problems.sync_error
            try:
                with self.services.store() as store:
                    summary = self.services.worker(store).sync_user(AUTHOR)
            except _SYNC_ERRORS as exc:
                # The folder vanished, cannot be read...: shown on every page until a sync works.
                self.problems.sync_error = str(exc) or type(exc).__name__
                self._bump()
                return SyncOutcome(True, f"sync failed: {self.problems.sync_error}")
            read_again = list(changed or ()) if self._synced_once else None
            self.problems.record(
                [(f.path, f.message) for f in summary.failures],
                [(w.path, w.message) for w in summary.warnings],
                read_again=read_again,
            )
            self._synced_once = True
            moved = summary.head_sha != self._head or summary.written or summary.archived
            self._head = summary.head_sha
            changed_anything = bool(moved) or (self.problems.everything(), None) != before
            if changed_anything:
                self._bump()
            published = summary.succeeded - summary.drafts
            line = (
                f"synced: {summary.succeeded} in sync ({published} published, {summary.drafts} drafts), "
                f"{summary.written} written, {summary.failed} failed, {len(summary.warnings)} warnings"
            )
            return SyncOutcome(changed_anything, line)

    @contextmanager
    def reads(self) -> Iterator[AuthorReads]:
        """The author's view of the store, on a connection for one page."""
        with self.services.store() as store:
            yield AuthorReads(store.db)

    def _bump(self) -> None:
        with self._changed:
            self._version += 1
            self._changed.notify_all()
