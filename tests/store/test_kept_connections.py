"""A database connection kept across warm Lambda invocations: a connection killed while the environment
sat frozen costs one reconnect and no lost or doubled write, and a job's named lock never outlives it.

The kill is the one TiDB and proxies do to idle connections: an admin session KILLs the worker's
(idle) session between two deliveries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from function.store.backends import MySQLDatabase, open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore, job_store
from function.store.locks import _lock_name
from function.store.schema import create_tables
from tests.kit.blog_checks import delivery, served, table_rows
from tests.kit.blog_fixtures import Blog, article
from tests.kit.mariadb import server_from_url

pytestmark = pytest.mark.mysql


@pytest.fixture
def admin(mysql_server: str) -> Iterator[Any]:
    connection_ = server_from_url(mysql_server).connect()
    yield connection_
    connection_.close()


@pytest.fixture
def mysql_blog(make_blog: Any, mysql_url: str) -> Blog:
    blog: Blog = make_blog()
    assert blog.settings.database_url.startswith("mysql"), "these faults need the server"
    return blog


@pytest.fixture(params=["mysql"])
def db_url(request: pytest.FixtureRequest) -> str:
    """MariaDB only: a KILL needs a server."""
    url: str = request.getfixturevalue("mysql_url")
    return url


def session_of(db: Any) -> int:
    """The server session of this thread's (kept) connection."""
    return int(db.connection().thread_id())


def kill(admin: Any, session: int) -> None:
    admin.cursor().execute(f"KILL {int(session)}")


def lock_holder(admin: Any, db: Any, user_id: int) -> Any:
    cursor = admin.cursor()
    cursor.execute("SELECT IS_USED_LOCK(%s)", (_lock_name(db.database, user_id),))
    return cursor.fetchone()[0]


def test_a_warm_delivery_reuses_the_connection_and_leaves_no_lock(mysql_blog: Blog, admin: Any) -> None:
    # GIVEN a delivery run in Lambda mode (connections kept by default there)
    mysql_blog.commit({"articles/a.md": article("A")})
    assert mysql_blog.deliver_via_lambda(delivery="d-1")["statusCode"] == 200
    first = session_of(mysql_blog.db)
    # WHEN a second delivery runs in the same environment
    mysql_blog.commit({"articles/b.md": article("B")})
    assert mysql_blog.deliver_via_lambda(delivery="d-2")["statusCode"] == 200
    # THEN it ran on the same session, which is still open and holds no user lock
    assert session_of(mysql_blog.db) == first
    assert not mysql_blog.db.is_closed()
    assert lock_holder(admin, mysql_blog.db, 1) is None
    assert mysql_blog.db.reconnects == 0
    assert set(served(mysql_blog)) == {"a", "b"}


def test_a_connection_killed_while_idle_costs_one_reconnect_and_no_lost_or_doubled_write(
    mysql_blog: Blog, admin: Any
) -> None:
    # GIVEN a warm environment whose kept connection the server killed while it was frozen
    mysql_blog.commit({"articles/a.md": article("A")})
    assert mysql_blog.deliver_via_lambda(delivery="d-1")["statusCode"] == 200
    killed = session_of(mysql_blog.db)
    kill(admin, killed)
    # WHEN the next delivery arrives
    mysql_blog.commit({"articles/a.md": article("A2"), "articles/b.md": article("B")})
    result = mysql_blog.deliver_via_lambda(delivery="d-2")
    # THEN it succeeds on a new connection after exactly one reconnect
    assert result["statusCode"] == 200
    assert mysql_blog.db.reconnects == 1
    assert session_of(mysql_blog.db) != killed
    # AND every write happened once: both articles as pushed, one row per delivery and per article
    assert {slug: a["title"] for slug, a in served(mysql_blog).items()} == {"a": "A2", "b": "B"}
    assert delivery(mysql_blog, "d-2").outcome == "success"
    assert table_rows(mysql_blog, "deliveries") == 2
    assert table_rows(mysql_blog, "articles") == 2
    assert lock_holder(admin, mysql_blog.db, 1) is None


def test_a_job_whose_first_statement_writes_pings_before_it_and_writes_once(
    mysql_url: str, admin: Any
) -> None:
    # GIVEN a kept connection, killed while idle
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
    with job_store(db, keep=True) as store:
        store.users.add_user("alice", "a@example.com", 1)
    kill(admin, session_of(db))
    # WHEN the next job starts with a write
    with job_store(db, keep=True) as store:
        store.users.add_user("bob", "b@example.com", 2)
    # THEN the dead connection was found before the write, and the write happened once
    assert isinstance(db, MySQLDatabase) and db.reconnects == 1
    with connection(db):
        names = [row[0] for row in db.execute_sql("SELECT name FROM users ORDER BY name").fetchall()]
    assert names == ["alice", "bob"]
    db.close()


def test_a_lock_is_released_at_the_end_of_its_job_even_when_the_job_fails(mysql_url: str, admin: Any) -> None:
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        user = PeeweeStore(db).users.add_user("alice", "a@example.com", 1)
    # A job that ends normally: the lock is gone, the connection stays for the next job
    with job_store(db, keep=True) as store, store.locks.installation_user_locked(1, 1) as locked:
        assert locked is not None
        assert lock_holder(admin, db, user.id) == session_of(db)
    assert lock_holder(admin, db, user.id) is None
    assert not db.is_closed()
    # A job that fails while holding the lock: released, and the connection is closed too
    with pytest.raises(RuntimeError), job_store(db, keep=True) as store:
        with store.locks.installation_user_locked(1, 1):
            raise RuntimeError("the job failed")
    assert lock_holder(admin, db, user.id) is None
    assert db.is_closed()


def test_a_lock_whose_release_failed_closes_the_kept_connection(mysql_url: str, admin: Any) -> None:
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        user = PeeweeStore(db).users.add_user("alice", "a@example.com", 1)
    # WHEN the RELEASE_LOCK cannot be sent (the session was killed inside the job)
    with job_store(db, keep=True) as store, store.locks.installation_user_locked(1, 1):
        kill(admin, session_of(db))
    # THEN the store knew it still held the lock and did not keep the connection
    assert db.is_closed()
    # The server frees a killed session's locks as its thread ends, which under load takes a moment.
    for _ in range(50):
        if lock_holder(admin, db, user.id) is None:
            break
        time.sleep(0.1)
    assert lock_holder(admin, db, user.id) is None


def test_connect_per_job_stays_available(mysql_blog: Blog) -> None:
    from dataclasses import replace

    mysql_blog.settings = replace(mysql_blog.settings, database_connections="per-job")
    mysql_blog.commit({"articles/a.md": article("A")})
    assert mysql_blog.deliver_via_lambda(delivery="d-1")["statusCode"] == 200
    assert mysql_blog.db.is_closed()


def test_a_snapstart_restore_drops_the_kept_connection_and_the_next_delivery_connects_again(
    mysql_blog: Blog, admin: Any
) -> None:
    # GIVEN a warm environment with a kept connection (as in the snapshot)
    app = mysql_blog.lambda_app()
    mysql_blog.commit({"articles/a.md": article("A")})
    assert mysql_blog.deliver_via_lambda(delivery="d-1")["statusCode"] == 200
    snapshot_session = session_of(mysql_blog.db)
    # WHEN the restore hook runs
    app.extensions["blog_api"].after_restore()
    # THEN the snapshot's connection is closed, and the next delivery opens its own
    assert mysql_blog.db.is_closed()
    mysql_blog.commit({"articles/b.md": article("B")})
    assert mysql_blog.deliver_via_lambda(delivery="d-2")["statusCode"] == 200
    assert session_of(mysql_blog.db) != snapshot_session
    assert mysql_blog.db.reconnects == 0
    assert set(served(mysql_blog)) == {"a", "b"}


class Seconds:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_kept_connection_is_retired_before_the_first_job_after_its_age(
    mysql_blog: Blog, admin: Any
) -> None:
    # GIVEN a warm environment whose connections may live 300 s
    clock = Seconds()
    db = mysql_blog.db
    assert isinstance(db, MySQLDatabase)
    db.clock, db.max_connection_age_s = clock, 300
    mysql_blog.commit({"articles/a.md": article("A")})
    assert mysql_blog.deliver_via_lambda(delivery="d-1")["statusCode"] == 200
    first = session_of(db)
    # WHEN a delivery comes 299 s after it opened THEN it runs on the same connection
    clock.now += 299
    mysql_blog.commit({"articles/b.md": article("B")})
    assert mysql_blog.deliver_via_lambda(delivery="d-2")["statusCode"] == 200
    assert session_of(db) == first
    # WHEN the next comes at 300 s THEN the old connection is closed before it, and it runs on a new one
    clock.now += 1
    mysql_blog.commit({"articles/c.md": article("C")})
    assert mysql_blog.deliver_via_lambda(delivery="d-3")["statusCode"] == 200
    assert session_of(db) != first
    assert (db.retired, db.reconnects) == (1, 0)  # retired, never found dead in the middle of a job
    assert lock_holder(admin, db, 1) is None
    assert set(served(mysql_blog)) == {"a", "b", "c"}
    # AND the server has no session of the old connection left
    cursor = admin.cursor()
    cursor.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s", (first,))
    assert cursor.fetchone()[0] == 0


def test_the_age_limit_comes_from_the_setting(mysql_url: str) -> None:
    from function.services import Services
    from function.settings import Settings

    settings = Settings.from_env(
        {"DATABASE_URL": mysql_url, "DATABASE_MAX_CONNECTION_AGE_S": "120"}, require_secret=False
    )

    db = Services(settings).database()

    assert isinstance(db, MySQLDatabase) and db.max_connection_age_s == 120
    assert (
        Settings.from_env({"DATABASE_URL": mysql_url}, require_secret=False).database_max_connection_age_s
        == 300
    )
