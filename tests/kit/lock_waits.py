"""Waiting, in a test, until other sessions are blocked on a lock: the step that makes a race happen
the same way on every run instead of by chance."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from tests.kit.mariadb import server_from_url


def wait_until_blocked(db_url: str, statement_prefix: str, count: int, timeout_s: float = 10.0) -> None:
    """Return once ``count`` sessions of ``db_url``'s database are running a statement that starts with
    ``statement_prefix`` (and so wait for a lock someone holds); AssertionError after ``timeout_s``."""
    database = urlsplit(db_url).path.lstrip("/")
    admin = server_from_url(db_url).connect()
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            with admin.cursor() as cursor:
                cursor.execute(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                    "WHERE DB = %s AND COMMAND = 'Query' AND INFO LIKE %s",
                    (database, statement_prefix.replace("%", r"\%") + "%"),
                )
                row = cursor.fetchone()
            if row is not None and int(row[0]) >= count:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{count} sessions did not block on {statement_prefix!r} in {timeout_s} s"
                )
            time.sleep(0.01)
    finally:
        admin.close()
