"""Opening a push: its user's lock, what the database says of the delivery, the skip decisions, and for a
push that syncs, the branch head read while what is stored is read and the start is recorded.

One implementation on every backend, one ordinary statement at a time:

1. the user registered for the installation, with the user's lock taken in the same SELECT
   (``installation_user_locked``; on SQLite a process lock after the SELECT);
2. this delivery's record and the repository's latest sync, in one SELECT (``delivery_and_last_sync``);
3. the skip decisions (``replay``): another repository, a head already synced, a delivery already
   processed. A skipped push makes no GitHub request, and a complete delivery's record is left as it was;
4. for a push that syncs: the branch head and its listing are read from the source on another thread
   (under the lock, so two deliveries that run at once can never roll content back) while the first push
   pins its repository, the article index, the remembered parse failures, the start record and the
   images' rows go to the database.

The lock is released when the ``locked`` block ends (on a connection closed after the job, with it).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import NoReturn

from function.assets.syncing import AssetSync
from function.errors import UnknownInstallation
from function.sources.port import ArticleSource, RepoRef, Snapshot
from function.store.records import DeliveryRecord, UserRecord
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync.plan import Known
from function.worker.sync.ports import WorkerStore
from function.worker.sync.records import DeliveryRecorder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Locked:
    """A push under its user's lock: the user, this delivery's record as it was (None: never started)
    and the latest sync of the pushed repository (None: none yet)."""

    user: UserRecord
    previous: DeliveryRecord | None
    last_sync: DeliveryRecord | None


@dataclass(frozen=True)
class Started:
    """A push whose start is recorded: what is stored, and the branch head being read."""

    user: UserRecord
    repo: RepoRef
    known: Known
    _head: Future[Snapshot]

    def head(self) -> Snapshot:
        """The listing of the branch head, read under the lock. Raises the source's errors."""
        return self._head.result()


def repo_of(push: PushRef) -> RepoRef:
    return RepoRef(push.repository, push.branch, push.installation_id, pushed_head=push.after)


class PushOpening:
    """Opens the pushes of one worker on its store and source."""

    def __init__(
        self,
        store: WorkerStore,
        source: ArticleSource,
        recorder: DeliveryRecorder,
        *,
        lock_timeout_s: float,
        assets: AssetSync | None,
    ) -> None:
        self._store = store
        self._source = source
        self._recorder = recorder
        self._lock_timeout_s = lock_timeout_s
        self._assets = assets

    @contextlib.contextmanager
    def locked(self, delivery: DeliveryInfo, push: PushRef) -> Iterator[Locked]:
        """Steps 1 and 2, the lock held for the block. Raises LockTimeout with nothing written, and
        UnknownInstallation (recorded, with the fix) when nobody is registered for the installation."""
        with self._store.locks.installation_user_locked(push.installation_id, self._lock_timeout_s) as user:
            if user is None:
                self._unknown_installation(delivery, push)
            previous, last_sync = self._store.deliveries.delivery_and_last_sync(
                delivery.delivery_id, push.installation_id, push.repository
            )
            yield Locked(user, previous, last_sync)

    @contextlib.contextmanager
    def started(self, user: UserRecord, delivery: DeliveryInfo, push: PushRef) -> Iterator[Started]:
        """Step 4, for a push that syncs: its start recorded and the head being read, which the block's
        end waits for (no thread of the read outlives it)."""
        repo = repo_of(push)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="head-read") as pool:
            head = pool.submit(self._source.snapshot, repo)
            if user.repository is None or (user.repository_id is None and push.repository_id is not None):
                # The first push from the named repository pins its id (or, from a local folder only,
                # the first push names it). Never a change: ``follows`` let only these through.
                self._store.users.pin_repository(
                    user.id, user.repository or push.repository, push.repository_id
                )
            index = self._store.reconcile.load_index(user.id)
            failures = self._store.reconcile.load_failures(user.id)
            self._recorder.start(delivery, push)
            assets = self._assets.start(user.id) if self._assets is not None else None
            yield Started(user, repo, Known(index, failures, assets), head)

    def _unknown_installation(self, delivery: DeliveryInfo, push: PushRef) -> NoReturn:
        fix = f"blog-api users set-installation --name <user> --installation-id {push.installation_id}"
        log.error(
            "Unknown installation",
            extra={
                "delivery": delivery.delivery_id,
                "installation_id": push.installation_id,
                "repository": push.repository,
                "fix": fix,
            },
        )
        # Recorded too, so `blog-api deliveries` shows why nothing synced, with the fix.
        self._recorder.start(delivery, push)
        self._recorder.finish_failed(delivery, f"unknown installation {push.installation_id}: {fix}")
        raise UnknownInstallation(push.installation_id)
