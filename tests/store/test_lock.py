"""The per-user sync lock: GET_LOCK on MySQL/TiDB, a process lock on SQLite."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from function.db import connection, open_database
from function.store import LockTimeout, PeeweeStore


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
            with connection(store.db), store.user_lock(user_id, timeout_s):
                outcome.append(None)
        except BaseException as exc:  # handed back to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    return outcome[0]


def test_second_holder_times_out(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with store.user_lock(1, timeout_s=5):
        started = time.monotonic()
        error = try_lock(other_store, 1, timeout_s=0.5)
        waited = time.monotonic() - started

    assert isinstance(error, LockTimeout)
    assert 0.4 <= waited < 5


def test_other_users_are_not_blocked(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with store.user_lock(1, timeout_s=5):
        assert try_lock(other_store, 2, timeout_s=0.5) is None


def test_lock_is_free_again_after_the_block(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with store.user_lock(1, timeout_s=5):
        pass
    assert try_lock(other_store, 1, timeout_s=0.5) is None


def test_lock_is_released_when_the_block_fails(store: PeeweeStore, other_store: PeeweeStore) -> None:
    with pytest.raises(RuntimeError), store.user_lock(1, timeout_s=5):
        raise RuntimeError("sync failed")
    assert try_lock(other_store, 1, timeout_s=0.5) is None


def test_waiter_gets_the_lock_when_the_holder_finishes(store: PeeweeStore, other_store: PeeweeStore) -> None:
    release = threading.Timer(0.3, lambda: None)
    with store.user_lock(1, timeout_s=5):
        release.start()
        release.join()
        holder_done_at = time.monotonic()
    # Taken after the holder left: a waiter with a long time-out simply gets it.
    assert try_lock(other_store, 1, timeout_s=5) is None
    assert time.monotonic() - holder_done_at < 5
