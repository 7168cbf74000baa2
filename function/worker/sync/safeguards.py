"""What a sync passes before it writes anything: the user's binding to its source (``binding``), and the
safety valve for a mass removal (``mass_removal``). The worker asks both for a push and for ``blog-api
sync``, under the user's lock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from function.sources.port import ArticleSource
from function.store.records import COMPLETE_OUTCOMES, UserRecord
from function.worker.sync.binding import binding_of, check_binding
from function.worker.sync.mass_removal import Valve
from function.worker.sync.ports import Users
from function.worker.sync.replay import HEAD_ALREADY_SYNCED
from function.worker.sync.summary import SyncSummary


class Safeguards:
    """One worker's checks, on its users and its source."""

    def __init__(
        self, users: Users, source: ArticleSource, clock: Callable[[], datetime], *, fraction: float
    ) -> None:
        self._users = users
        self._source = source
        self._clock = clock
        self._fraction = fraction

    def bind(self, user: UserRecord, *, repository: str | None = None) -> None:
        """Refuse (``SourceMismatch``, nothing read or written) a sync from another source than the one
        ``user`` is bound to; bind a user bound to nothing yet to this one (one UPDATE)."""
        binding = binding_of(self._source)
        check_binding(user, binding, repository=repository)
        if user.source is None:
            self._users.bind_source(user.id, binding)

    def valve(self, user: UserRecord, *, confirmed: bool = False) -> Valve | None:
        """The valve for a sync of ``user``: None when a person confirmed this sync (``--confirm-removal``
        of ``blog-api sync``), else the setting's threshold with any count confirmed for a redelivery."""
        if confirmed:
            return None
        return Valve(user.name, self._fraction, self._clock(), user.removal_confirmed)

    def done(self, user: UserRecord, summary: SyncSummary) -> None:
        """A removal confirmed for a redelivery lasts until a sync of the user's repository completes, or
        finds its head synced already (the redelivered one, or a later one: the state of the source it
        confirmed is then gone, and a new mass removal is held again). A sync that failed or was cut by
        the time budget keeps it, for its retry; a push from another repository leaves it alone."""
        if user.removal_confirmed is None:
            return
        if summary.outcome in COMPLETE_OUTCOMES or summary.skipped_reason == HEAD_ALREADY_SYNCED:
            self._users.confirm_removal(user.id, None)
