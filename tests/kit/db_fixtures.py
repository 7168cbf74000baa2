"""Database fixtures: a MariaDB server per test run, a fresh database per test, and a store on either
backend. Loaded as a pytest plugin (``pytest_plugins = ["tests.kit.db_fixtures"]``).

``db_url`` is parametrised over SQLite and MySQL, so a test that takes it (or ``store``) runs on both;
the MySQL case carries the ``mysql`` marker (``-m "not mysql"`` skips it).

With ``TEST_TIDB_MODE=1`` (``make test-tidb``) every MySQL database of the run is reached through the
TiDB-faithful relay (``tests.kit.tidb_proxy``): snapshot reads from BEGIN, TiDB's row and transaction
size limits, ``GET_LOCK``'s one-second floor. ``tidb_url`` gives a database through the relay in any
run, for the tests of what TiDB does that MariaDB alone would not show.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from tests.kit.mariadb import (
    ENV_TEST_DATABASE_URL,
    MariaDBUnavailable,
    ServerInfo,
    ThrowawayMariaDB,
    server_from_url,
)
from tests.kit.tidb_proxy import TiDBRelay

ENV_TIDB_MODE = "TEST_TIDB_MODE"

# Tests expected to fail on the TiDB-faithful relay, each with why (docs/development.md lists them).
TIDB_MODE_XFAILS = {
    "tests/worker/test_time_budget.py::"
    "test_a_20000_article_first_sync_stays_in_bounded_transactions_over_several_invocations[mysql]": (
        "the test's modelled clock is moved by the read-ahead thread's fetches while a chunk commits; the "
        "relay's checks make a commit of 1,000 articles slower in wall time, so a chunk is modelled three "
        "times as long and each invocation takes four chunks instead of five: the model's arithmetic, not "
        "the database's behaviour"
    ),
}


def tidb_mode() -> bool:
    """True when this run's MySQL databases are reached through the TiDB-faithful relay."""
    return os.environ.get(ENV_TIDB_MODE, "").strip().lower() in ("1", "true", "yes")


# How much longer a MySQL test may run in TiDB mode: the relay reads every packet in Python, checks
# each statement and answers a transaction's reads from its snapshot, so the 5,000-article syncs take
# two to three times their time on MariaDB alone.
TIDB_MODE_TIME_FACTOR = 3


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In TiDB mode, mark the tests of ``TIDB_MODE_XFAILS`` as expected to fail, with their reason, and
    give each MySQL test ``TIDB_MODE_TIME_FACTOR`` times its time limit (pytest-timeout's)."""
    if not tidb_mode():
        return
    default = float(config.getini("timeout") or 0)
    for item in items:
        reason = TIDB_MODE_XFAILS.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=f"TiDB mode: {reason}", strict=False))
        if item.get_closest_marker("mysql") is None:
            continue
        own = item.get_closest_marker("timeout")
        limit = float(own.args[0]) if own is not None and own.args else default
        if limit > 0:
            # First among its markers: pytest-timeout reads the closest one.
            item.add_marker(pytest.mark.timeout(limit * TIDB_MODE_TIME_FACTOR), append=False)


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[ServerInfo]:
    """The MySQL-protocol server of this run, reached directly: TEST_DATABASE_URL's server when set,
    else a throwaway MariaDB started now and removed at the end."""
    given = os.environ.get(ENV_TEST_DATABASE_URL)
    if given:
        yield server_from_url(given)
        return
    server = ThrowawayMariaDB()
    try:
        info = server.start()
    except MariaDBUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield info
    finally:
        server.stop()


@pytest.fixture(scope="session")
def tidb_relay(mariadb_server: ServerInfo) -> Iterator[TiDBRelay]:
    """The TiDB-faithful relay in front of this run's server (``tests.kit.tidb_proxy``)."""
    relay = TiDBRelay(mariadb_server)
    relay.start()
    try:
        yield relay
    finally:
        relay.stop()


@pytest.fixture(scope="session")
def mysql_server(request: pytest.FixtureRequest, mariadb_server: ServerInfo) -> str:
    """The admin URL (no database) through which this run's MySQL databases are reached: the server
    itself, or the TiDB-faithful relay in front of it with ``TEST_TIDB_MODE=1``."""
    if tidb_mode():
        relay: TiDBRelay = request.getfixturevalue("tidb_relay")
        assert relay.info is not None
        return relay.info.admin_url
    return mariadb_server.admin_url


@pytest.fixture
def mysql_url(mysql_server: str) -> Iterator[str]:
    """A fresh, empty utf8mb4 database for this test, dropped after it."""
    with fresh_database(mysql_server) as url:
        yield url


@pytest.fixture
def tidb_url(tidb_relay: TiDBRelay) -> Iterator[str]:
    """A fresh, empty database reached through the TiDB-faithful relay (in every run)."""
    assert tidb_relay.info is not None
    with fresh_database(tidb_relay.info.admin_url) as url:
        yield url


@contextlib.contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    """A fresh, empty utf8mb4 database on the server of ``admin_url`` for the block, dropped after it."""
    info = server_from_url(admin_url)
    name = f"blogapi_t_{uuid.uuid4().hex[:12]}"
    admin = info.connect()
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
        yield info.url_for(name)
    finally:
        try:
            _drop_database(admin, name)
        finally:
            admin.close()


def _drop_database(admin: pymysql.connections.Connection[Any], name: str) -> None:
    # A connection a test left open (holding a transaction or a metadata lock) would make DROP DATABASE
    # wait forever: end those sessions first.
    with admin.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM information_schema.processlist WHERE db = %s AND id <> CONNECTION_ID()", (name,)
        )
        for (session_id,) in cursor.fetchall():
            # The session may have ended on its own meanwhile (1094: unknown thread id).
            with contextlib.suppress(pymysql.err.OperationalError, pymysql.err.InternalError):
                cursor.execute(f"KILL {int(session_id)}")
        cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite database file in the test's temporary folder (created on first connect)."""
    return f"sqlite:///{tmp_path}/blog.db"


@pytest.fixture(params=["sqlite", pytest.param("mysql", marks=pytest.mark.mysql)])
def db_url(request: pytest.FixtureRequest) -> str:
    """An empty database on each backend in turn: the test runs once on SQLite, once on MariaDB."""
    name = "mysql_url" if request.param == "mysql" else "sqlite_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def second_db_url(db_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Another empty database on ``db_url``'s backend, for a test that compares two side by side."""
    if db_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path}/second.db"
        return
    with fresh_database(request.getfixturevalue("mysql_server")) as url:
        yield url


@pytest.fixture
def store(db_url: str) -> Iterator[PeeweeStore]:
    """A PeeweeStore on ``db_url`` with the tables created, connected for the test and closed after."""
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        yield PeeweeStore(db)


@pytest.fixture
def mysql_store(mysql_url: str) -> Iterator[PeeweeStore]:
    """``store`` on MariaDB only, for a test of what the MySQL protocol sends."""
    db = open_database(mysql_url)
    with connection(db):
        create_tables(db)
        yield PeeweeStore(db)
