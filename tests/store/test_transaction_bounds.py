"""The byte bounds of the write transactions add up to less than ``TRANSACTION_WRITE_MAX_BYTES``, which is
below TiDB's ``txn-total-size-limit`` (100 MiB by default), whatever a transaction combines."""

from __future__ import annotations

from function.articles.row_size import ENTRY_LIMIT_BYTES, MAX_ROW_BYTES
from function.store.asset_records import ASSET_TRANSACTION_MAX_BYTES
from function.store.batching import (
    ARCHIVE_MAX_BYTES,
    BOOK_TRANSACTION_MAX_BYTES,
    TRANSACTION_MAX_BYTES,
    TRANSACTION_WRITE_MAX_BYTES,
)

TIDB_TXN_TOTAL_SIZE_LIMIT = 100 * 1024 * 1024


def test_every_kind_of_write_transaction_stays_under_the_one_bound() -> None:
    assert TRANSACTION_WRITE_MAX_BYTES < TIDB_TXN_TOTAL_SIZE_LIMIT
    # The last batch of articles (its bound, or one row over it alone) carries the first archives.
    last_batch = max(TRANSACTION_MAX_BYTES, MAX_ROW_BYTES)
    assert last_batch + ARCHIVE_MAX_BYTES < TRANSACTION_WRITE_MAX_BYTES
    # A book in one transaction, or one part of a book (one chapter row over a part goes alone).
    assert BOOK_TRANSACTION_MAX_BYTES < TRANSACTION_WRITE_MAX_BYTES
    assert max(TRANSACTION_MAX_BYTES, MAX_ROW_BYTES) < TRANSACTION_WRITE_MAX_BYTES
    assert ASSET_TRANSACTION_MAX_BYTES < TRANSACTION_WRITE_MAX_BYTES


def test_a_row_stays_under_tidbs_entry_limit() -> None:
    assert MAX_ROW_BYTES < ENTRY_LIMIT_BYTES == 6 * 1024 * 1024
