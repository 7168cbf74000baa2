"""``DATABASE_URL`` read and checked without touching a database (standard library only, so settings can
refuse a malformed URL at start-up without the accept path importing the database stack).

``mysql://user:pw@host:port/db?ssl_ca=/path`` (TiDB, MySQL, MariaDB) or ``sqlite:///relative/path.db`` /
``sqlite:////absolute/path.db``. Error messages never quote the URL: it holds the password.

TLS: with ``ssl_ca`` the server's certificate and host name are verified unless the URL itself says
``ssl_verify_cert=false`` / ``ssl_verify_identity=false`` (unsafe: anyone on the path can then read the
connection). PyMySQL on its own verifies neither when only a CA is given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from ipaddress import ip_address
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from function.errors import DatabaseUrlError

CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 30
WRITE_TIMEOUT_S = 30

_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False}
_MYSQL_BOOL_ARGS = {"ssl_verify_cert", "ssl_verify_identity", "ssl_disabled"}
_MYSQL_FILE_ARGS = {"ssl_ca", "ssl_cert", "ssl_key"}
_MYSQL_STR_ARGS = _MYSQL_FILE_ARGS | {"ssl_key_password", "charset", "init_command"}
_MYSQL_INT_ARGS = {"connect_timeout", "read_timeout", "write_timeout"}
# Any of these asks PyMySQL for TLS; verification then defaults to on (see the module docstring).
_TLS_ARGS = ("ssl_ca", "ssl_cert", "ssl_key", "ssl_verify_cert", "ssl_verify_identity")


@dataclass(frozen=True)
class DatabaseTarget:
    """What a database URL names: ``kind`` "mysql" (``name`` and PyMySQL's ``params``) or "sqlite"
    (``name`` is the file path, or ":memory:")."""

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def uses_tls(self) -> bool:
        """True for a MySQL URL whose connections are encrypted (TLS asked for, and not disabled)."""
        asked = any(self.params.get(key) for key in _TLS_ARGS)
        return self.kind == "mysql" and asked and not self.params.get("ssl_disabled")

    @property
    def is_loopback(self) -> bool:
        """True for SQLite and for a MySQL server on this machine (nothing crosses a network)."""
        if self.kind != "mysql":
            return True
        host = str(self.params.get("host", ""))
        if host.lower() == "localhost":
            return True
        try:
            return ip_address(host).is_loopback
        except ValueError:
            return False


def parse_database_url(url: str) -> DatabaseTarget:
    """The target of ``url``; raises DatabaseUrlError for anything blog-api cannot open."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "mysql":
        try:
            port = parts.port
        except ValueError:
            # urllib's message quotes the "port", which is part of the password when the password holds
            # an unencoded "/" or "?": say what is wrong without it (and without its traceback).
            raise DatabaseUrlError(
                "host:port is malformed (URL-encode special characters in the password)"
            ) from None
        return _mysql(parts.hostname, port, parts.username, parts.password, parts.path, parts.query)
    if scheme == "sqlite":
        return _sqlite(url[len("sqlite://") :])
    raise DatabaseUrlError(f"unsupported scheme {scheme!r}: expected mysql:// or sqlite:///")


def _mysql(
    host: str | None, port: int | None, user: str | None, password: str | None, path: str, query: str
) -> DatabaseTarget:
    name = unquote(path.lstrip("/"))
    if not host or not name:
        raise DatabaseUrlError("a mysql:// URL needs a host and a database name")
    params: dict[str, Any] = {
        "host": host,
        "port": port or 3306,
        "user": unquote(user or ""),
        "password": unquote(password or ""),
        "charset": "utf8mb4",
        "connect_timeout": CONNECT_TIMEOUT_S,
        "read_timeout": READ_TIMEOUT_S,
        "write_timeout": WRITE_TIMEOUT_S,
    }
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in _MYSQL_BOOL_ARGS:
            # PyMySQL reads any non-empty string as true ("false" included): convert explicitly.
            if value.lower() not in _BOOL_WORDS:
                raise DatabaseUrlError(f"option {key} must be true or false")
            params[key] = _BOOL_WORDS[value.lower()]
        elif key in _MYSQL_INT_ARGS:
            if not value.isdigit():
                raise DatabaseUrlError(f"option {key} must be a whole number of seconds")
            params[key] = int(value)
        elif key in _MYSQL_STR_ARGS:
            # A missing CA file would otherwise surface at the first connection, as a traceback.
            if key in _MYSQL_FILE_ARGS and not os.path.isfile(value):
                raise DatabaseUrlError(f"option {key}: no such file {value!r}")
            params[key] = value
        else:
            raise DatabaseUrlError(f"unknown option {key!r}")
    if any(params.get(key) for key in _MYSQL_FILE_ARGS) and not params.get("ssl_disabled"):
        # PyMySQL would encrypt without checking whom it talks to; only the URL itself may say so.
        params.setdefault("ssl_verify_cert", True)
        params.setdefault("ssl_verify_identity", True)
    return DatabaseTarget("mysql", name, params)


def _sqlite(path: str) -> DatabaseTarget:
    if not path.startswith("/") or not path[1:]:
        raise DatabaseUrlError("a sqlite URL looks like sqlite:///relative.db or sqlite:////abs.db")
    if "?" in path:
        # Otherwise the options would silently become part of the file's name.
        raise DatabaseUrlError("a sqlite URL takes no options")
    return DatabaseTarget("sqlite", unquote(path[1:]))
