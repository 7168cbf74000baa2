"""Database fixtures: a MariaDB server per test run, a fresh database per test, and a store on either
backend. Loaded as a pytest plugin (``pytest_plugins = ["tests.kit.db_fixtures"]``).

``db_url`` is parametrised over SQLite and MySQL, so a test that takes it (or ``store``) runs on both;
the MySQL case carries the ``mysql`` marker (``-m "not mysql"`` skips it).
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
    ThrowawayMariaDB,
    server_from_url,
)


@pytest.fixture(scope="session")
def mysql_server() -> Iterator[str]:
    """The admin URL (no database) of the MySQL-protocol server for this run: TEST_DATABASE_URL's server
    when set, else a throwaway MariaDB started now and removed at the end."""
    given = os.environ.get(ENV_TEST_DATABASE_URL)
    if given:
        yield server_from_url(given).admin_url
        return
    server = ThrowawayMariaDB()
    try:
        info = server.start()
    except MariaDBUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield info.admin_url
    finally:
        server.stop()


@pytest.fixture
def mysql_url(mysql_server: str) -> Iterator[str]:
    """A fresh, empty utf8mb4 database for this test, dropped after it."""
    with _mysql_database(mysql_server) as url:
        yield url


@contextlib.contextmanager
def _mysql_database(admin_url: str) -> Iterator[str]:
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
    with _mysql_database(request.getfixturevalue("mysql_server")) as url:
        yield url


@pytest.fixture
def store(db_url: str) -> Iterator[PeeweeStore]:
    """A PeeweeStore on ``db_url`` with the tables created, connected for the test and closed after."""
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        yield PeeweeStore(db)
