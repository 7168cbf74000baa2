"""The deploying page's table of stack keys is generated from their declarations and the stack files."""

from __future__ import annotations

from pathlib import Path

from infra import stack_docs
from infra.config import KEYS
from shared.doc_tables import replace_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "deploying.md"


def test_the_committed_table_is_the_one_the_declarations_make() -> None:
    page = PAGE.read_text(encoding="utf-8")
    # Stale: run `make docs` (python -m infra.stack_docs --write docs/deploying.md).
    assert replace_table(page, stack_docs.COMMAND, stack_docs.table()) == page


def test_every_key_has_its_row_with_both_stacks_values() -> None:
    rows = stack_docs.table().splitlines()[2:]
    listed = [row.split(" | ")[0].removeprefix("| ").strip("`") for row in rows]
    assert listed == ["aws:region", *KEYS[: KEYS.index("scheduleExpression") + 1], "artifactPath",
                      *KEYS[KEYS.index("scheduleExpression") + 1 :]]  # fmt: skip
    by_key = dict(zip(listed, rows, strict=True))
    assert "| `1769` / `3008` |" in by_key["memorySize"]
    assert "| `timeout` | `300` |" in by_key["timeout"]
    # Values that differ by the stack's prefix only are shown once.
    assert "| `/<prefix>/blog-api/database-url` |" in by_key["databaseUrlParam"]
    assert "| `d-st` / `p-st` |" in by_key["physicalPrefix"]
    assert "| never committed |" in by_key["artifactPath"]
    # The function's variable a key sets comes from the runtime settings' declarations.
    assert by_key["logLevel"].endswith("; sets `LOG_LEVEL` |")
