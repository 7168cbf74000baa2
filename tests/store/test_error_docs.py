"""The operating page's table of error codes is the store's own table, kept current."""

from __future__ import annotations

from pathlib import Path

from function.store import error_docs
from function.store.driver_errors import KNOWN_ERRORS
from shared.doc_tables import replace_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "operating.md"


def test_the_committed_table_is_the_one_the_store_reads_errors_by() -> None:
    page = PAGE.read_text(encoding="utf-8")
    # Stale: run `make docs` (python -m function.store.error_docs --write docs/operating.md).
    assert replace_table(page, error_docs.COMMAND, error_docs.table()) == page


def test_every_code_has_its_row_and_says_whether_it_is_retried() -> None:
    rows = error_docs.table().splitlines()[2:]
    codes = [row.split(" | ")[0].removeprefix("| ") for row in rows]
    assert codes == [str(code) for code in sorted(KNOWN_ERRORS)] + ["1105"]
    [too_large] = [row for row in rows if row.startswith("| 8004 |")]
    assert "txn-total-size-limit" in too_large and too_large.endswith("| no: reported once, in words |")
    [conflict] = [row for row in rows if row.startswith("| 9007 |")]
    assert conflict.endswith("| yes (503) |")
