"""Every MySQL and TiDB error code the store may meet is read as it means: raised by the real server
through the real driver (a trigger SIGNALs the code when the store writes), then either retried (503,
DatabaseUnavailable, with its words) or reported once in words (the driver's error kept, its meaning
said by ``cause``). The decision for each code is stated here, apart from the table it checks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import peewee
import pytest

from function.errors import DatabaseUnavailable
from function.store.backends import open_database
from function.store.connection import connection
from function.store.driver_errors import KNOWN_ERRORS
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from function.store.steps import cause, is_store_error
from tests.kit.builders import T0
from tests.kit.db_fixtures import fresh_database

pytestmark = pytest.mark.mysql

# The connection could not be made or was lost, or the server aborted the work for a reason that
# passes on retry (PingCAP: "the application can safely retry the whole transaction"; 9001-9008:
# PD or TiKV slow, busy or unavailable for a moment).
RETRYABLE = {
    2002, 2003, 2005, 2006, 2013, 2014, 2055, 4031, 1040, 1053, 1927, 1317,
    1205, 1213, 8002, 8005, 8022, 8027, 8028, 8229, 9007,
    8120, 8252, 9001, 9002, 9003, 9004, 9005, 9006, 9008,
}  # fmt: skip
# The server refused us: a setting to fix, then the retried delivery passes (503, never 500).
REFUSED = {1044, 1045, 1049, 1129, 1130, 1251, 1698, 2026, 2059, 2061, 3159}
# Past a limit: the same statement fails again, so it is reported once, not retried.
FINAL = {8004, 9500, 8025, 1153, 1406, 8001, 3024}


def test_the_table_holds_exactly_the_codes_decided_here() -> None:
    assert set(KNOWN_ERRORS) == RETRYABLE | REFUSED | FINAL
    assert {c for c, e in KNOWN_ERRORS.items() if e.retryable} == RETRYABLE | REFUSED
    assert {c for c, e in KNOWN_ERRORS.items() if e.refused} == REFUSED


@pytest.fixture(scope="module")
def database(mysql_server: str) -> Iterator[peewee.Database]:
    """One database for the module: the codes only change the trigger that raises them."""
    with fresh_database(mysql_server) as url:
        db = open_database(url)
        with connection(db):
            create_tables(db)
            yield db
        db.close()


def raising(db: peewee.Database, code: int, message: str) -> None:
    """The next delivery the store records fails with error ``code``, from the server itself."""
    db.execute_sql("DROP TRIGGER IF EXISTS inject_error")
    db.execute_sql(
        "CREATE TRIGGER inject_error BEFORE INSERT ON deliveries FOR EACH ROW "
        f"SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = {code}, MESSAGE_TEXT = '{message}'"
    )


def record_a_delivery(db: peewee.Database) -> None:
    PeeweeStore(db).deliveries.start_delivery("d-1", "push", 1, "alice/blog", T0, T0 + timedelta(seconds=1))


@pytest.mark.parametrize("code", sorted(RETRYABLE | REFUSED))
def test_a_code_that_may_pass_on_retry_is_database_unavailable_with_its_words(
    database: peewee.Database, code: int
) -> None:
    raising(database, code, f"injected {code}")

    with pytest.raises(DatabaseUnavailable) as raised:
        record_a_delivery(database)

    text = str(raised.value)
    assert KNOWN_ERRORS[code].words in text
    assert f"(error {code}): " in text and f"injected {code}" in text
    if code not in REFUSED:
        assert "credentials" not in text


@pytest.mark.parametrize("code", sorted(FINAL))
def test_a_code_past_a_limit_is_reported_once_in_words(database: peewee.Database, code: int) -> None:
    raising(database, code, f"injected {code}")

    with pytest.raises(peewee.PeeweeException) as raised:
        record_a_delivery(database)

    assert not isinstance(raised.value, DatabaseUnavailable)
    assert is_store_error(raised.value)
    words = cause(raised.value)
    assert words.startswith(f"injected {code} (error {code}: the database {KNOWN_ERRORS[code].words}")
    assert "fails the same way when tried again" in words


def test_tidbs_transaction_too_large_is_not_read_as_refused_credentials(database: peewee.Database) -> None:
    raising(database, 8004, "Transaction is too large, size: 104857600")

    with pytest.raises(peewee.PeeweeException) as raised:
        record_a_delivery(database)

    words = cause(raised.value)
    assert "credentials" not in words
    assert "txn-total-size-limit" in words and "(error 8004:" in words


@pytest.mark.parametrize(
    ("message", "retried", "said"),
    [
        ("Information schema is changed during the execution. [try again later]", True, "try again later"),
        ("Connections using insecure transport are prohibited", True, "refuses connections without TLS"),
        ("other error: unknown error", False, None),
    ],
)
def test_tidbs_generic_1105_is_read_by_its_message(
    database: peewee.Database, message: str, retried: bool, said: str | None
) -> None:
    raising(database, 1105, message)

    with pytest.raises(peewee.PeeweeException if not retried else DatabaseUnavailable) as raised:
        record_a_delivery(database)

    assert isinstance(raised.value, DatabaseUnavailable) is retried
    if said is not None:
        assert said in str(raised.value)
    else:
        assert cause(raised.value) == f"{message} (error 1105)"


def test_an_unknown_code_keeps_the_drivers_words_and_is_not_retried(database: peewee.Database) -> None:
    raising(database, 1644, "injected failure")

    with pytest.raises(peewee.PeeweeException) as raised:
        record_a_delivery(database)

    assert not isinstance(raised.value, DatabaseUnavailable)
    assert cause(raised.value) == "injected failure (error 1644)"
