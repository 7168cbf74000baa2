"""What a driver error means, in one table: each MySQL and TiDB error code the store may meet, whether a
retry may pass (then it becomes DatabaseUnavailable, answered 503 and retried), and its words for an
operator. Its own module so that the backends, the connection helpers and the words of a failed step
can all ask, none importing the other.

The TiDB codes and their advice are PingCAP's ("Error Codes and Troubleshooting", "TiDB Pessimistic
Transaction Mode", the configuration file's ``txn-entry-size-limit`` and ``txn-total-size-limit``);
the others are MySQL's, which TiDB returns too, and the client library's (2000-2999). A code that is
not in the table is not retryable: its statement is a bug or a refused value, and the driver's own
words are shown.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

import pymysql


@dataclass(frozen=True)
class KnownError:
    """One error code: whether the same work may pass when tried again, and what happened in words
    that complete "the database ..." (``describe``)."""

    code: int
    retryable: bool
    words: str
    refused: bool = False  # the server refused us (credentials, host, TLS): a setting to fix


def _gone(code: int, words: str) -> KnownError:
    return KnownError(code, True, words)


def _retry(code: int, words: str) -> KnownError:
    return KnownError(code, True, words + "; nothing of it was kept, and it may be tried again")


def _refused(code: int, words: str) -> KnownError:
    # A configuration or rotation problem, not a bug in a delivery: answered 503 like an outage
    # (retryable, the cause in the log), so the delivery passes once the setting is fixed.
    return KnownError(code, True, words, refused=True)


def _final(code: int, words: str) -> KnownError:
    return KnownError(code, False, words + "; the same work fails the same way when tried again")


_TABLE = (
    # The connection could not be made, or was lost.
    _gone(2002, "could not be reached (socket)"),
    _gone(2003, "could not be reached (connection refused or timed out)"),
    _gone(2005, "could not be reached (unknown host)"),
    _gone(2006, "closed the connection (server has gone away)"),
    _gone(2013, "lost the connection during a statement (or the read timed out)"),
    _gone(2014, "left the connection out of step (an answer half read when it dropped)"),
    _gone(2055, "lost the connection (system error)"),
    _gone(4031, "closed a connection that stayed idle too long"),
    _gone(1040, "has no connection free (too many connections)"),
    _gone(1053, "is shutting down"),
    _gone(1927, "killed the connection"),
    _gone(1317, "interrupted the statement (KILL QUERY)"),
    # The server gave up on the transaction; PingCAP: "the application can safely retry".
    _retry(1205, "gave up waiting for a row lock another transaction held (innodb_lock_wait_timeout)"),
    _retry(1213, "rolled the transaction back to end a deadlock"),
    _retry(8002, "rolled back a transaction whose SELECT FOR UPDATE met a commit conflict"),
    _retry(8005, "met a write conflict (txnStartTS is stale)"),
    _retry(8022, "failed to commit the transaction and rolled it back"),
    _retry(8027, "ran the statement on an outdated table schema (TiDB to PD)"),
    _retry(8028, "saw a table's schema change while the transaction ran"),
    _retry(8229, "ended a transaction that outlived its time to live"),
    _retry(9007, "met a write conflict"),
    # TiDB's storage or placement driver was slow or busy for a moment.
    _retry(8120, "could not get the transaction's start timestamp from PD"),
    _retry(8252, "ran past the resource group's request-unit quota"),
    _retry(9001, "timed out waiting for PD (the placement driver)"),
    _retry(9002, "timed out waiting for TiKV"),
    _retry(9003, "had a TiKV server too busy to answer"),
    _retry(9004, "timed out resolving locks (many conflicting transactions)"),
    _retry(9005, "had a Region unavailable (a TiKV server busy or down)"),
    _retry(9006, "ran a transaction longer than the GC life time (tidb_gc_life_time)"),
    _retry(9008, "had too many requests sent to TiKV at once"),
    # The server refused us: credentials, database, host or TLS.
    _refused(1044, "refused the credentials (access denied to the database)"),
    _refused(1045, "refused the credentials (access denied for the user)"),
    _refused(1049, "has no such database (the URL names one that is not there yet)"),
    _refused(1129, "blocked this host after many connection errors"),
    _refused(1130, "does not let this host connect"),
    _refused(1251, "asked for an authentication protocol the client does not speak"),
    _refused(1698, "refused the credentials (access denied by the authentication plugin)"),
    _refused(2026, "failed the TLS handshake"),
    _refused(2059, "asked for an authentication plugin the client cannot load"),
    _refused(2061, "requires a secure connection for this authentication"),
    _refused(3159, "refuses connections without TLS (require_secure_transport)"),
    # What was asked is past a limit: the same statement fails again.
    _final(
        8004,
        "refused the transaction as too large: its writes passed TiDB's txn-total-size-limit "
        "(100 MiB by default), so it was rolled back",
    ),
    _final(9500, "refused the transaction as too large (txn-total-size-limit), so it was rolled back"),
    _final(
        8025,
        "refused a row as too large: one row (its key and value) passed TiDB's txn-entry-size-limit "
        "(6 MiB by default)",
    ),
    _final(1153, "refused a statement larger than max_allowed_packet"),
    _final(1406, "refused a value longer than its column"),
    _final(8001, "stopped a statement that used more memory than tidb_mem_quota_query allows"),
    _final(3024, "stopped a statement that ran longer than max_execution_time"),
)
KNOWN_ERRORS: dict[int, KnownError] = {entry.code: entry for entry in _TABLE}

# TiDB answers some conditions with the generic 1105 and says more in the message.
_TRY_AGAIN = _retry(1105, "asked to try again later (an information schema change, or a busy cluster)")
_INSECURE = _refused(1105, "refuses connections without TLS (TiDB Cloud requires it: add ssl_ca to the URL)")


def known(code: int | None, message: str = "") -> KnownError | None:
    """The table's entry for ``code`` (and, for TiDB's generic 1105, its message); None: unknown."""
    if code == 1105:
        text = message.lower()
        if "try again later" in text:
            return _TRY_AGAIN
        if "insecure transport" in text:
            return _INSECURE
        return None
    return KNOWN_ERRORS.get(code) if code is not None else None


def known_error(exc: BaseException) -> KnownError | None:
    """The table's entry for the driver error inside ``exc``, if it has one."""
    for err in error_chain(exc):
        if isinstance(err, pymysql.err.MySQLError) and err.args and isinstance(err.args[0], int):
            message = str(err.args[1]) if len(err.args) > 1 else ""
            return known(err.args[0], message)
    return None


def describe(exc: BaseException) -> str | None:
    """What happened, in the table's words ("refused the credentials (...)"), or None."""
    entry = known_error(exc)
    return entry.words if entry is not None else None


def error_code(exc: BaseException) -> int | None:
    """The driver's numeric error code inside ``exc``, if any."""
    for err in error_chain(exc):
        if isinstance(err, pymysql.err.MySQLError) and err.args and isinstance(err.args[0], int):
            return err.args[0]
    return None


def is_connection_error(exc: BaseException) -> bool:
    """True when ``exc`` (a Peewee or driver error) is worth a retry: the database is unreachable,
    refused our credentials, the connection dropped, or the server aborted the work for a reason that
    passes on retry (the table's ``retryable``)."""
    for err in error_chain(exc):
        if isinstance(err, pymysql.err.InterfaceError):
            return True  # PyMySQL raises it for a connection that is already closed
        if isinstance(err, pymysql.err.MySQLError):
            entry = known_error(err)
            if entry is not None and entry.retryable:
                return True
        elif isinstance(err, sqlite3.OperationalError):
            text = str(err).lower()
            if "locked" in text or "busy" in text or "unable to open" in text or "disk i/o" in text:
                return True
        elif isinstance(err, TimeoutError | ConnectionError):
            return True
    return False


def error_chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        # Peewee wraps the driver's error and passes it as the first argument.
        for arg in current.args:
            if isinstance(arg, BaseException) and id(arg) not in seen:
                yield from error_chain(arg)
        current = current.__cause__ or current.__context__
