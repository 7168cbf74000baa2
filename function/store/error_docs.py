"""The table of database error codes in ``docs/operating.md``, generated from the store's own table
(``function.store.driver_errors``), so the page says what the code does.

``python -m function.store.error_docs --write docs/operating.md`` (or ``make docs``) writes it;
``--check`` fails while the committed table differs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from function.store.driver_errors import KNOWN_ERRORS, KnownError
from shared.doc_tables import main as write_table
from shared.doc_tables import markdown_table

COMMAND = "python -m function.store.error_docs"
HEADER = ("code", "what happened (the database …)", "retried")


def table() -> str:
    """One row per known code, in order, then TiDB's generic 1105 read by its message."""
    rows = [row(entry) for entry in sorted(KNOWN_ERRORS.values(), key=lambda e: e.code)]
    rows.append(
        (
            "1105",
            'TiDB\'s generic error, read by its message: "try again later" is retried; "insecure '
            'transport" is TiDB Cloud refusing a connection without TLS (add `ssl_ca` to the URL); '
            "anything else is not retried",
            "by its message",
        )
    )
    return markdown_table(HEADER, rows)


def row(entry: KnownError) -> tuple[str, str, str]:
    if entry.refused:
        retried = "yes (503): fix the setting, and the retry passes"
    elif entry.retryable:
        retried = "yes (503)"
    else:
        retried = "no: reported once, in words"
    return str(entry.code), entry.words, retried


def main(argv: Sequence[str] | None = None) -> int:
    return write_table(argv, COMMAND, table)


if __name__ == "__main__":
    sys.exit(main())
