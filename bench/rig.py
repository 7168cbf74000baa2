"""What the benchmark runs against: the GitHub stand-in with latency, a throwaway MariaDB (or the server in
TEST_DATABASE_URL) behind the latency relay, and the App key; plus databases made ready for a run.

Set-up work (creating databases, tables, the user, seeding the repository) goes to the server directly,
never through the relay, so it is never charged to a measured run.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import peewee

from bench.latency_relay import LatencyRelay
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from tests.kit.github_fixtures import AppKey, GitHubClientParts, build_github_source, generate_app_key
from tests.kit.github_standin import GitHubStandIn
from tests.kit.mariadb import ENV_TEST_DATABASE_URL, ServerInfo, ThrowawayMariaDB, server_from_url

INSTALLATION_ID = 1
USER = "bench"


@dataclass
class Rig:
    github: GitHubStandIn
    key: AppKey
    server: ServerInfo
    relay: LatencyRelay

    def direct_url(self, database: str) -> str:
        """The database on the server itself (set-up, no latency)."""
        return self.server.url_for(database)

    def relayed_url(self, database: str) -> str:
        """The database through the latency relay (measured runs)."""
        relayed = ServerInfo("127.0.0.1", self.relay.port, self.server.user, self.server.password)
        return relayed.url_for(database)

    def github_client(self) -> GitHubClientParts:
        """A GitHubSource on the stand-in with the production HTTP client settings (time-outs, retries)."""
        from function.github.http import HttpClient

        return build_github_source(self.github, self.key, http=HttpClient())

    def fresh_database(self, name: str, repository: str) -> None:
        """(Re)create ``name`` with our tables and the user on ``INSTALLATION_ID`` for ``repository``."""
        self.empty_database(name)
        db = open_database(self.direct_url(name))
        with connection(db):
            create_tables(db)
            PeeweeStore(db).users.add_user(USER, "bench@example.com", INSTALLATION_ID, repository)
        db.close()

    def empty_database(self, name: str) -> None:
        """(Re)create ``name`` with nothing in it (code of another commit makes its own tables)."""
        with contextlib.closing(self.server.connect()) as admin, admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
            cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")

    def drop_database(self, name: str) -> None:
        with contextlib.closing(self.server.connect()) as admin, admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")


@contextlib.contextmanager
def running_rig(github_latency_s: float, db_latency_s: float) -> Iterator[Rig]:
    """Start everything; stop and remove everything after (the throwaway server's files included)."""
    key = generate_app_key()
    mariadb: ThrowawayMariaDB | None = None
    url = os.environ.get(ENV_TEST_DATABASE_URL)
    if url:
        server = server_from_url(url)
    else:
        mariadb = ThrowawayMariaDB()
        server = mariadb.start()
    try:
        with (
            GitHubStandIn(
                app_public_key=key.public_key, installations={INSTALLATION_ID}, latency=github_latency_s
            ) as github,
            LatencyRelay(server.host, server.port, db_latency_s) as relay,
        ):
            yield Rig(github=github, key=key, server=server, relay=relay)
    finally:
        if mariadb is not None:
            mariadb.stop()


@contextlib.contextmanager
def relayed_database(rig: Rig, name: str) -> Iterator[peewee.Database]:
    """A Peewee database (not yet connected) on ``name`` through the relay; closed after."""
    db: Any = open_database(rig.relayed_url(name))
    try:
        yield db
    finally:
        db.close()
