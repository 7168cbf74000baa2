"""The per-user sync lock: a named server lock on MySQL/TiDB, a process lock on SQLite."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterator

import peewee
from peewee import fn

from function.errors import LockTimeout
from function.store.backends import is_mysql
from function.store.base import StoreBase
from function.store.connection import Session, connection, translate_errors
from function.store.models import (
    User,
)
from function.store.records import (
    UserRecord,
)
from function.store.users import _USER_COLUMNS, UserQueries
from shared.names import PROJECT

log = logging.getLogger(__name__)


# SQLite: one lock per (database file, user) for the whole process.
_sqlite_locks: dict[tuple[str, int], threading.Lock] = {}
_sqlite_locks_guard = threading.Lock()


class LockQueries(StoreBase):
    """The per-user sync lock, held in the store's session (whose end may release it)."""

    def __init__(self, session: Session, users: UserQueries) -> None:
        super().__init__(session)
        self._users = users
        self._closes_after_job = session.closes_after_job
        self._held_server_locks = session.held_server_locks  # the session's set, shared

    def find_user_by_installation(self, installation_id: int) -> UserRecord | None:
        return self._users.find_user_by_installation(installation_id)

    @contextlib.contextmanager
    def installation_user_locked(self, installation_id: int, timeout_s: float) -> Iterator[UserRecord | None]:
        """The user registered for an App installation, with that user's sync lock (``user_lock``) held
        for the block; None, and no lock, when nobody is registered for it.

        On MySQL/TiDB the lookup and ``GET_LOCK`` are one statement, so the worker pays one database
        round trip (35 ms through the proxy) instead of two. Raises LockTimeout like ``user_lock``."""
        if not is_mysql(self._db):
            user = self.find_user_by_installation(installation_id)
            if user is None:
                yield None
                return
            with self.user_lock(user.id, timeout_s):
                yield user
            return
        with connection(self._db):
            query = User.select(
                *_USER_COLUMNS,
                fn.GET_LOCK(fn.CONCAT(_lock_prefix(self._db.database), User.id), max(timeout_s, 0)),
            ).where(User.github_installation_id == installation_id)
            with translate_errors():
                row = self._first(query)
            if row is None:
                yield None
                return
            user, acquired = UserRecord(*row[:-1]), row[-1]
            if acquired != 1:
                raise LockTimeout(f"user {user.id} is being synced by someone else (waited {timeout_s} s)")
            self._held_server_locks.add(user.id)
            try:
                yield user
            finally:
                if not self._closes_after_job:
                    self._release_server_lock(user.id)

    @contextlib.contextmanager
    def user_lock(self, user_id: int, timeout_s: float) -> Iterator[None]:
        """Hold the user's sync lock for the block: on MySQL/TiDB a named server lock (``GET_LOCK``) on
        this thread's connection, so it holds across processes and Lambda instances; on SQLite a
        process-wide lock. Raises LockTimeout when not acquired within ``timeout_s`` seconds.

        Keep ``timeout_s`` below the connection's read time-out (30 s by default), or the wait ends as
        DatabaseUnavailable instead; TiDB rounds waits up to at least 1 s (MariaDB takes fractions)."""
        if is_mysql(self._db):
            with connection(self._db), self._server_lock(user_id, timeout_s):
                yield
        else:
            lock = self._process_lock(user_id)
            if not lock.acquire(timeout=max(timeout_s, 0)):
                raise LockTimeout(f"user {user_id} is being synced by someone else (waited {timeout_s} s)")
            try:
                yield
            finally:
                lock.release()

    @contextlib.contextmanager
    def _server_lock(self, user_id: int, timeout_s: float) -> Iterator[None]:
        name = _lock_name(self._db.database, user_id)
        with translate_errors():
            row = self._db.execute_sql("SELECT GET_LOCK(%s, %s)", (name, max(timeout_s, 0))).fetchone()
        # 1: acquired; 0: timed out; NULL: an error such as the session being killed while waiting.
        if not row or row[0] != 1:
            raise LockTimeout(f"user {user_id} is being synced by someone else (waited {timeout_s} s)")
        self._held_server_locks.add(user_id)
        try:
            yield
        finally:
            self._release_server_lock(user_id)

    def _release_server_lock(self, user_id: int) -> None:
        try:
            self._db.execute_sql("SELECT RELEASE_LOCK(%s)", (_lock_name(self._db.database, user_id),))
            self._held_server_locks.discard(user_id)
        except peewee.PeeweeException as exc:
            # The connection is gone, and the server released the lock with it; a kept connection
            # still marked as holding it is closed at the end of the job (``job_store``).
            log.warning("Releasing the user lock failed", extra={"user_id": user_id, "error": str(exc)})

    def _process_lock(self, user_id: int) -> threading.Lock:
        key = (str(self._db.database), user_id)
        with _sqlite_locks_guard:
            return _sqlite_locks.setdefault(key, threading.Lock())


def _lock_prefix(database: str) -> str:
    """The server-wide lock name of a user is this prefix and the user id (MySQL caps names at 64
    characters; GET_LOCK names are per server, so the database is part of it: dev and prod may share one)."""
    prefix = f"{PROJECT}:{database}:user:"
    if len(prefix) + 20 <= 64:  # 20: the digits of the largest id
        return prefix
    return f"{PROJECT}:{hashlib.sha256(database.encode()).hexdigest()[:16]}:user:"


def _lock_name(database: str, user_id: int) -> str:
    return f"{_lock_prefix(database)}{user_id}"


def server_lock_name(database: str, what: str) -> str:
    """The server-wide ``GET_LOCK`` name of ``what`` (a few characters, such as ``"migrate"``) in
    ``database``: within MySQL's 64 characters, the database's name hashed when it is too long."""
    name = f"{PROJECT}:{database}:{what}"
    if len(name) <= 64:
        return name
    return f"{PROJECT}:{hashlib.sha256(database.encode()).hexdigest()[:16]}:{what}"
