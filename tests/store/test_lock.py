"""The per-user sync lock: GET_LOCK on MySQL/TiDB, a process lock on SQLite."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from function.errors import LockTimeout
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore, job_store
from tests.kit.statements import count_statements


@pytest.fixture
def other_store(store: PeeweeStore, db_url: str) -> Iterator[PeeweeStore]:
    """A second store on its own connection to the same database (another worker)."""
    db = open_database(db_url)
    with connection(db):
        yield PeeweeStore(db)


def try_lock(store: PeeweeStore, user_id: int, timeout_s: float) -> BaseException | None:
    """Take and release the lock from another thread; the error it raised, if any."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            with connection(store.db), store.locks.user_lock(user_id, timeout_s):
                outcome.append(None)
        except BaseException as exc:  # handed back to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    return outcome[0]


def test_second_holder_times_out(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with store.locks.user_lock(1, timeout_s=5):
        started = time.monotonic()
        error = try_lock(other_store, 1, timeout_s=0.5)
        waited = time.monotonic() - started

    assert isinstance(error, LockTimeout)
    assert 0.4 <= waited < 5


def test_other_users_are_not_blocked(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with store.locks.user_lock(1, timeout_s=5):
        assert try_lock(other_store, 2, timeout_s=0.5) is None


def test_lock_is_free_again_after_the_block(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with store.locks.user_lock(1, timeout_s=5):
        pass
    assert try_lock(other_store, 1, timeout_s=0.5) is None


def test_lock_is_released_when_the_block_fails(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with pytest.raises(RuntimeError), store.locks.user_lock(1, timeout_s=5):
        raise RuntimeError("sync failed")
    assert try_lock(other_store, 1, timeout_s=0.5) is None


def test_waiter_gets_the_lock_when_the_holder_finishes(store: PeeweeStore, other_store: PeeweeStore) -> None:
    release = threading.Timer(0.3, lambda: None)
    with store.locks.user_lock(1, timeout_s=5):
        release.start()
        release.join()
        holder_done_at = time.monotonic()
    # Taken after the holder left: a waiter with a long time-out simply gets it.
    assert try_lock(other_store, 1, timeout_s=5) is None
    assert time.monotonic() - holder_done_at < 5


def test_a_jobs_lock_goes_with_its_connection_without_a_release_round_trip(
    store: PeeweeStore, other_store: PeeweeStore, db_url: str
) -> None:
    # GIVEN a registered user and a job store on its own connection (as every delivery gets)
    user = store.users.add_user("alice", "a@example.com", 7)
    job_db = open_database(db_url)
    with job_store(job_db) as job, count_statements(job_db) as seen:
        with job.locks.installation_user_locked(7, timeout_s=5) as locked:
            assert locked is not None and locked.id == user.id
            # WHILE the job holds it, nobody else gets it
            assert isinstance(try_lock(other_store, user.id, timeout_s=0.3), LockTimeout)

    # THEN the job sent no RELEASE_LOCK of its own, and the lock is free once its connection closed
    assert not [s for s in seen.statements if "RELEASE_LOCK" in s.upper()]
    assert job_db.is_closed()
    assert try_lock(other_store, user.id, timeout_s=5) is None


def test_a_job_inside_someone_elses_connection_releases_the_lock_itself(
    store: PeeweeStore, other_store: PeeweeStore
) -> None:
    user = store.users.add_user("alice", "a@example.com", 7)
    # The connection is already open (the caller's): job_store must not count on it closing.
    with job_store(store.db) as job:
        with job.locks.installation_user_locked(7, timeout_s=5):
            pass
        assert not store.db.is_closed()
        assert try_lock(other_store, user.id, timeout_s=0.3) is None
