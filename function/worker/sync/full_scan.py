"""``blog-api sync`` (and the preview's sync): a full scan of one user's repository now, under the same
lock as deliveries, through the same safeguards, and recorded among the deliveries as a push is (an id
``sync-…``, the event ``sync``), warnings and refusals included."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime

from function.aws.deadline import Deadline
from function.errors import ConfigError, NotFound
from function.sources.port import ArticleSource, RepoRef
from function.store.steps import is_store_error
from function.webhooks.push import DeliveryInfo
from function.worker.sync.chunked import Progress
from function.worker.sync.plan import Known
from function.worker.sync.ports import WorkerStore
from function.worker.sync.records import DeliveryRecorder
from function.worker.sync.replay import same_name
from function.worker.sync.repository import RepositorySync
from function.worker.sync.safeguards import Safeguards
from function.worker.sync.summary import SyncSummary
from function.worker.sync.write_failures import failure_text, worded_before_writes

# The event a ``blog-api sync`` is recorded under among the deliveries.
SYNC_EVENT = "sync"


class FullScan:
    """One worker's full scans, on its store, source, sync and safeguards."""

    def __init__(
        self,
        store: WorkerStore,
        source: ArticleSource,
        sync: RepositorySync,
        recorder: DeliveryRecorder,
        guards: Safeguards,
        *,
        clock: Callable[[], datetime],
        lock_timeout_s: float,
    ) -> None:
        self._store = store
        self._source = source
        self._sync = sync
        self._recorder = recorder
        self._guards = guards
        self._clock = clock
        self._lock_timeout_s = lock_timeout_s

    def run(
        self,
        name: str,
        *,
        branch: str | None,
        repository: str | None,
        progress: Progress | None,
        deadline: Deadline,
        rebuild: bool,
        confirm_removal: bool,
    ) -> SyncSummary:
        """See ``Worker.sync_user``."""
        user = self._store.users.get_user(name)
        if user is None:
            raise NotFound(f"no user named {name!r}")
        if repository and user.repository and not same_name(repository, user.repository):
            raise ConfigError(
                f"user {name!r} follows {user.repository}, not {repository}: "
                f"blog-api users set-repository --name {name} --repository {repository} changes it"
            )
        repo = RepoRef(user.repository or repository or "", branch, user.installation_id)
        with self._store.locks.user_lock(user.id, self._lock_timeout_s):
            user = self._store.users.get_user(name) or user  # as it is now that the lock is held
            delivery = DeliveryInfo(f"sync-{uuid.uuid4()}", SYNC_EVENT, self._clock())
            self._recorder.start_sync(delivery, user.installation_id, repo.full_name or None)
            try:
                self._guards.bind(user, repository=repo.full_name or None)
                if user.repository is None and repository:
                    self._store.users.pin_repository(user.id, repository, None)
                known = self._known(user.id)
                snapshot = self._source.snapshot(repo)
                valve = self._guards.valve(user, confirmed=confirm_removal)
                summary = self._sync.run(
                    user.id, repo, snapshot, known, deadline, rebuild=rebuild, progress=progress, valve=valve
                )
            except Exception as exc:
                self._recorder.finish_failed(delivery, failure_text(exc)[:2000])
                raise
            self._recorder.finish(delivery, summary)
            self._guards.done(user, summary)
            return summary

    def _known(self, user_id: int) -> Known:
        try:
            return self._sync.known(user_id)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            raise worded_before_writes(exc, "reading the stored articles") from exc
