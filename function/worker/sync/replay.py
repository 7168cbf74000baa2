"""Which pushes need no sync: a push from a repository the blog does not follow, a replayed head, and a
delivery already processed. Each is recorded (but the duplicate, whose record stands) and skipped."""

from __future__ import annotations

import logging

from function.store.records import DeliveryRecord, Outcome, UserRecord, is_complete
from function.webhooks.envelope import PushRef
from function.webhooks.push import DeliveryInfo
from function.worker.sync.records import DeliveryRecorder
from function.worker.sync.summary import SyncSummary

log = logging.getLogger(__name__)

OTHER_REPOSITORY = "other repository"
ALREADY_PROCESSED = "delivery already processed"
HEAD_ALREADY_SYNCED = "head already synced"


def same_name(a: str, b: str) -> bool:
    """GitHub's owner/name comparison: case-insensitive."""
    return a.casefold() == b.casefold()


def follows(user: UserRecord, push: PushRef, *, first_push_pins: bool = False) -> bool:
    """Whether the push comes from the repository the user's blog follows: by GitHub's id once both
    sides know it (a deleted repository's name can be reused), else by name. A user who follows no
    repository yet follows none: on GitHub, any repository the App can see would otherwise become the
    blog's by pushing first (``first_push_pins`` allows it for a local folder, which has only one)."""
    if user.repository is None:
        return first_push_pins
    if user.repository_id is not None and push.repository_id is not None:
        return bool(user.repository_id == push.repository_id)
    return same_name(user.repository, push.repository)


class Replays:
    """The skip decisions of one worker, recorded through its DeliveryRecorder."""

    def __init__(self, recorder: DeliveryRecorder, *, first_push_pins: bool = False) -> None:
        self._recorder = recorder
        self._first_push_pins = first_push_pins

    def skipped(
        self,
        user: UserRecord,
        delivery: DeliveryInfo,
        push: PushRef,
        previous: DeliveryRecord | None,
        last_sync: DeliveryRecord | None,
    ) -> SyncSummary | None:
        """The summary of a push that needs no sync, recorded (but the duplicate's, whose record stands),
        or None: a push from a repository the blog does not follow, a head the latest sync reached, a
        delivery already processed. ``previous``: this delivery's own record; ``last_sync``: the latest
        sync of the pushed repository (both read under the lock)."""
        if not follows(user, push, first_push_pins=self._first_push_pins):
            return self._other_repository(user, delivery, push)
        replayed = self._head_synced_by(last_sync, delivery, push)
        if replayed is not None:
            return replayed
        if is_complete(previous):
            # The one duplicate check: GitHub delivers at least once, and Lambda may run one event twice.
            return SyncSummary(skipped_reason=ALREADY_PROCESSED)
        return None

    def _other_repository(self, user: UserRecord, delivery: DeliveryInfo, push: PushRef) -> SyncSummary:
        """A push from a repository the user's blog does not follow: an App installed on "All
        repositories" receives every repository's pushes. Nothing is read or written but the record."""
        followed = (
            f"{user.repository} (id {user.repository_id or 'not seen yet'})"
            if user.repository
            else f"no repository: blog-api users set-repository --name {user.name} --repository owner/name"
        )
        pushed = f"{push.repository} (id {push.repository_id or 'unknown'})"
        log.info(
            "Push from another repository skipped",
            extra={"delivery": delivery.delivery_id, "repository": pushed, "followed": followed},
        )
        self._recorder.start(delivery, push)
        self._recorder.finish_empty(
            delivery, Outcome.SKIPPED, f"{OTHER_REPOSITORY}: {pushed}; the blog follows {followed}"[:2000]
        )
        return SyncSummary(skipped_reason=OTHER_REPOSITORY)

    def _head_synced_by(
        self, last: DeliveryRecord | None, delivery: DeliveryInfo, push: PushRef
    ) -> SyncSummary | None:
        """Replays cost nothing: a push whose ``after`` is the head the latest sync of this user's
        repository reached, with no transient failure left from it, is done without a GitHub request.
        It also coalesces deliveries queued on the lock: the ones behind a sync of their head end here.
        (X-GitHub-Delivery is not signed, so one captured push can come back under any number of ids.)
        The latest sync's own delivery, delivered again, is not a replay but a duplicate."""
        if last is None or not push.after or last.head_sha != push.after:
            return None
        if last.delivery_id == delivery.delivery_id:
            return None
        if last.retryable:
            # A file failed for a reason that may pass, or the listing was truncated: syncing this
            # head again can still change something.
            return None
        self._recorder.start(delivery, push)
        self._recorder.finish_empty(delivery, Outcome.SKIPPED, None, head_sha=last.head_sha)
        log.info(
            "Head already synced",
            extra={
                "delivery": delivery.delivery_id,
                "head_sha": last.head_sha,
                "synced_by": last.delivery_id,
            },
        )
        return SyncSummary(head_sha=last.head_sha, skipped_reason=HEAD_ALREADY_SYNCED)
