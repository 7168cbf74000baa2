"""One line in words for each failure a ``blog-api`` command can meet: what went wrong and what to do.

Driver errors arrive as tuples (``(2003, "Can't connect to MySQL server on 'db' ([Errno 111] ...)")``),
wrapped by Peewee and then by the store; the line names the database by host:port (or the SQLite file),
never by its URL, which holds the password.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from function.store.driver_errors import error_chain as _causes
from function.store.url import DatabaseTarget

# MySQL client/server error codes a newcomer meets, and what each means for them.
_CANNOT_CONNECT = {2002, 2003, 2005, 2006, 2013, 2055}
_ACCESS_DENIED = 1045
_NO_SUCH_DATABASE = 1049
_DATABASE_DENIED = 1044
_TLS_REQUIRED = 3159  # TiDB Cloud / MySQL: "Connections using insecure transport are prohibited"


def describe(exc: BaseException, target: DatabaseTarget | None) -> str:
    """The one line for ``exc`` (without the ``error:`` prefix)."""
    database = _database_line(exc, target)
    if database is not None:
        return database
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return first_line(message)


def first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] if lines else text


def missing_sqlite_file(target: DatabaseTarget, url_is_default: bool) -> str | None:
    """The line for a SQLite file that does not exist (a command other than ``init-db`` must not create
    it), or None when it exists (or the database is not SQLite)."""
    if target.kind != "sqlite" or target.name == ":memory:":
        return None
    path = Path(target.name)
    if path.is_file():
        return None
    where = path.resolve()
    if url_is_default:
        return (
            f"no database at {where} (DATABASE_URL is not set, and its default sqlite:///.data/blog.db is "
            f"relative to the current folder {Path.cwd()}): run blog-api from the project folder, where "
            "`make run` made it, set DATABASE_URL, or create this one with `blog-api init-db`"
        )
    return f"no database at {where}: check DATABASE_URL, or create it with `blog-api init-db`"


def _database_line(exc: BaseException, target: DatabaseTarget | None) -> str | None:
    where = _where(target)
    for err in _causes(exc):
        code, text = _driver_error(err)
        if code in _CANNOT_CONNECT:
            return (
                f"cannot reach the database at {where} ({_reason(text)}): "
                "is it running, and are the host and port in DATABASE_URL right?"
            )
        if code == _ACCESS_DENIED:
            user = _quoted(text) or (target.params.get("user") if target else "") or "?"
            return (
                f"authentication failed for user {user!r} at {where}: check the user name and password in "
                "DATABASE_URL (URL-encode special characters in the password)"
            )
        if code == _NO_SUCH_DATABASE:
            name = target.name if target else _quoted(text) or "?"
            return (
                f"the database {name!r} does not exist at {where}: create it (CREATE DATABASE {name}) or fix "
                "its name in DATABASE_URL"
            )
        if code == _DATABASE_DENIED:
            return f"the database user may not use the database at {where}: {text}"
        if code == _TLS_REQUIRED:
            return (
                f"the database at {where} accepts TLS connections only: add ?ssl_ca=/path/to/ca.pem"
                "&ssl_verify_identity=true to DATABASE_URL"
            )
        if isinstance(err, sqlite3.OperationalError) and "unable to open" in str(err):
            return f"cannot open the SQLite database at {where}: does its folder exist and may you write it?"
        if _is_tls_failure(err):
            return f"TLS with the database at {where} failed ({first_line(str(err))[:200]}): check ssl_ca"
    return None


def _where(target: DatabaseTarget | None) -> str:
    if target is None:
        return "DATABASE_URL"
    if target.kind == "sqlite":
        return str(Path(target.name).resolve()) if target.name != ":memory:" else ":memory:"
    return f"{target.params.get('host')}:{target.params.get('port')}"


def _driver_error(err: BaseException) -> tuple[int | None, str]:
    """PyMySQL's ``(code, message)`` arguments, or (None, "")."""
    args: tuple[Any, ...] = getattr(err, "args", ())
    if len(args) >= 2 and isinstance(args[0], int) and isinstance(args[1], str):
        return args[0], args[1]
    return None, ""


def _reason(text: str) -> str:
    """``Can't connect to MySQL server on 'h' ([Errno 111] Connection refused)`` -> ``connection refused``."""
    lowered = text.lower()
    for needle, words in (
        ("refused", "connection refused"),
        ("timed out", "timed out"),
        ("name or service not known", "unknown host"),
        ("nodename nor servname", "unknown host"),
        ("temporary failure in name resolution", "unknown host"),
        ("no route to host", "no route to host"),
        ("network is unreachable", "network unreachable"),
        ("lost connection", "the connection was dropped"),
        ("gone away", "the connection was dropped"),
    ):
        if needle in lowered:
            return words
    found = re.search(r"\(\[Errno -?\d+\] ([^)]*)\)", text)
    return found.group(1).lower() if found else first_line(text)[:200]


def transport_reason(exc: BaseException) -> str:
    """A few words for an HTTP client's failure (urllib3's messages quote its own connection objects)."""
    return _reason(str(exc)) if str(exc) else type(exc).__name__


def _quoted(text: str) -> str | None:
    found = re.search(r"'([^']*)'", text)
    return found.group(1) if found else None


def _is_tls_failure(err: BaseException) -> bool:
    import ssl

    return isinstance(err, ssl.SSLError)
