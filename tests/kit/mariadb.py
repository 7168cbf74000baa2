"""A throwaway MariaDB server for one test run, or the server named by TEST_DATABASE_URL.

The throwaway server lives in a temporary folder (data, socket, pid and log), listens on a free
loopback port, and is stopped and removed at the end; no system service is touched. Tests reach it
over TCP as an application user with a random password, like the app reaches TiDB.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pymysql

ENV_TEST_DATABASE_URL = "TEST_DATABASE_URL"
APP_USER = "blogapi_test"
START_TIMEOUT_S = 60.0

_INSTALL_HINT = (
    "MariaDB is needed for the database tests: run 'apt-get install mariadb-server' "
    "or set TEST_DATABASE_URL=mysql://user:pw@127.0.0.1:3306/db to use a server you run"
)


class MariaDBUnavailable(RuntimeError):
    """The server binaries are missing or the server would not start (the message is one line)."""


@dataclass(frozen=True)
class ServerInfo:
    """Where the test server is, and a user that may create and drop databases."""

    host: str
    port: int
    user: str
    password: str
    query: str = ""  # extra connect options (e.g. TLS) from TEST_DATABASE_URL

    @property
    def admin_url(self) -> str:
        """The server's URL without a database."""
        return self.url_for("")

    def url_for(self, database: str) -> str:
        """A ``mysql://`` URL for ``database`` on this server."""
        credentials = f"{quote(self.user, safe='')}:{quote(self.password, safe='')}"
        url = f"mysql://{credentials}@{self.host}:{self.port}/{database}"
        return f"{url}?{self.query}" if self.query else url

    def connect(self) -> pymysql.connections.Connection[Any]:
        """A plain PyMySQL connection without a database, autocommit (for admin statements)."""
        return pymysql.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            autocommit=True,
            connect_timeout=5,
            read_timeout=30,
        )


def server_from_url(url: str) -> ServerInfo:
    """The server of a ``mysql://user:pw@host:port/db`` URL (TEST_DATABASE_URL or an admin URL)."""
    parts = urlsplit(url)
    if parts.scheme != "mysql" or not parts.hostname:
        raise MariaDBUnavailable(f"{ENV_TEST_DATABASE_URL} must look like mysql://user:pw@host:port/db")
    return ServerInfo(
        parts.hostname,
        parts.port or 3306,
        unquote(parts.username or ""),
        unquote(parts.password or ""),
        parts.query,
    )


DEFAULT_BIN_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")


def _find(binary: str, bin_dirs: Sequence[str] | None) -> str | None:
    if bin_dirs is None:
        found = shutil.which(binary)
        if found:
            return found
    for folder in bin_dirs if bin_dirs is not None else DEFAULT_BIN_DIRS:
        candidate = Path(folder, binary)
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayMariaDB:
    """``start()`` a private mariadbd, ``stop()`` it and delete every file it wrote."""

    def __init__(self, bin_dirs: Sequence[str] | None = None) -> None:
        """``bin_dirs``: where to look for the MariaDB binaries (default: PATH, then the usual sbin/bin)."""
        self._bin_dirs = bin_dirs
        self._dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.info: ServerInfo | None = None

    def start(self) -> ServerInfo:
        mariadbd, install_db, client = (
            _find(name, self._bin_dirs) for name in ("mariadbd", "mariadb-install-db", "mariadb")
        )
        if not (mariadbd and install_db and client):
            raise MariaDBUnavailable(_INSTALL_HINT)
        as_root = os.geteuid() == 0
        self._dir = Path(tempfile.mkdtemp(prefix="blog-api-mariadb-"))
        data, sock = self._dir / "data", self._dir / "mysqld.sock"
        data.mkdir()
        # mariadbd refuses to run as root; it drops to the mysql user, which must own the folder.
        user_args = ["--user=mysql"] if as_root else []
        if as_root:
            shutil.chown(self._dir, "mysql", "mysql")
            shutil.chown(data, "mysql", "mysql")
        try:
            self._run(
                [
                    install_db,
                    "--no-defaults",
                    *user_args,
                    f"--datadir={data}",
                    "--auth-root-authentication-method=socket",
                    "--skip-test-db",
                ]
            )
            port = _free_port()
            # The server writes its own log (--log-error); this catches what it prints before that.
            with open(self._dir / "stdout.log", "wb") as log:
                self._proc = subprocess.Popen(
                    [
                        mariadbd,
                        "--no-defaults",
                        *user_args,
                        f"--datadir={data}",
                        f"--port={port}",
                        "--bind-address=127.0.0.1",
                        f"--socket={sock}",
                        f"--pid-file={self._dir / 'mysqld.pid'}",
                        f"--log-error={self._dir / 'error.log'}",
                        "--skip-name-resolve",
                        "--innodb-buffer-pool-size=64M",
                        # Throwaway data: skip the fsyncs that make every CREATE TABLE and COMMIT slow.
                        "--innodb-flush-log-at-trx-commit=0",
                        "--innodb-doublewrite=0",
                        "--innodb-flush-method=nosync",
                        "--character-set-server=utf8mb4",
                        "--collation-server=utf8mb4_unicode_ci",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            socket_user = "root" if as_root else _os_user()
            self._wait_ready(client, sock, socket_user)
            password = secrets.token_urlsafe(18)
            statements = "".join(
                f"CREATE USER '{APP_USER}'@'{host}' IDENTIFIED BY '{password}';"
                f"GRANT ALL PRIVILEGES ON *.* TO '{APP_USER}'@'{host}';"
                for host in ("localhost", "127.0.0.1")
            )
            self._run([client, "--no-defaults", f"--socket={sock}", f"-u{socket_user}", "-e", statements])
        except BaseException:
            self.stop()
            raise
        self.info = ServerInfo("127.0.0.1", port, APP_USER, password)
        return self.info

    def _wait_ready(self, client: str, sock: Path, user: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise MariaDBUnavailable(f"mariadbd exited at start: {self._error_log_tail()}")
            probe = subprocess.run(
                [client, "--no-defaults", f"--socket={sock}", f"-u{user}", "-e", "SELECT 1"],
                capture_output=True,
                check=False,
            )
            if probe.returncode == 0:
                return
            time.sleep(0.1)
        raise MariaDBUnavailable(f"mariadbd did not answer within {START_TIMEOUT_S:.0f} s")

    def _run(self, argv: list[str]) -> None:
        result = subprocess.run(argv, capture_output=True, check=False, timeout=120)
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).decode(errors="replace").strip().splitlines()[-1:]
            raise MariaDBUnavailable(f"{Path(argv[0]).name} failed: {' '.join(tail)}")

    def _error_log_tail(self) -> str:
        if self._dir is None:
            return ""
        try:
            lines = (self._dir / "error.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def stop(self) -> None:
        """Stop the server (SIGTERM is a clean shutdown for mariadbd) and remove its folder."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        folder, self._dir = self._dir, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _os_user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name
