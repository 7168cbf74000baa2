"""How many bytes an article's or a chapter's stored row takes, and the bound that keeps it storable.

TiDB keeps a row as one key-value pair and refuses a pair of ``txn-entry-size-limit`` or more (6 MiB by
default, error 8025). A refused row fails its whole transaction, and with it every other article in it,
on every push until the file changes. So a file whose row would come near that bound fails alone, when it
is read, with its sizes in the message: the version stored before is kept, the other files are written.

A row holds the Markdown, the HTML, the table of contents (JSON) and short columns (title, description,
path, hashes, times). The Markdown is capped at 1 MiB and the HTML at 4 MiB where they are made
(``parse``); the table of contents is capped here, at ``MAX_TOC_BYTES``: a heading's text and id appear
once in the HTML and once in the toc, so a file of nothing but long headings (Japanese ones percent-encode
to three times their bytes in the id) would otherwise make a toc as large as its HTML.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from function.articles.toc import TocEntry
from function.errors import ArticleParseError

MiB = 1024 * 1024
# TiDB's txn-entry-size-limit (its default; TiDB Cloud does not let it be raised).
ENTRY_LIMIT_BYTES = 6 * MiB
# What the row's key, the column headers, the index entries and the estimate of the short columns may add:
# the rows this module counts stay this far below the limit.
ROW_MARGIN_BYTES = 64 * 1024
MAX_ROW_BYTES = ENTRY_LIMIT_BYTES - ROW_MARGIN_BYTES
# The table of contents as stored (JSON). A long article's is a few KB.
MAX_TOC_BYTES = 1 * MiB
# The columns not given as text: ids, times, flags, the content, tags and output hashes (64 hex digits
# each), the render fingerprint; erring high.
_FIXED_COLUMNS_BYTES = 512


def toc_json(toc: Sequence[TocEntry]) -> str:
    """The table of contents as the ``toc`` column stores it."""
    return json.dumps([entry.as_json() for entry in toc], ensure_ascii=False)


def utf8_bytes(text: str | None) -> int:
    return len(text.encode("utf-8", "surrogatepass")) if text else 0


def stored_row_bytes(markdown: str, html: str, toc: str, others: Iterable[str | None] = ()) -> int:
    """About what the row takes: its text columns in UTF-8 (``others``: title, path...) and the rest."""
    texts = utf8_bytes(markdown) + utf8_bytes(html) + utf8_bytes(toc)
    return texts + sum(utf8_bytes(text) for text in others) + _FIXED_COLUMNS_BYTES


def megabytes(size: int) -> str:
    """``size`` in words: "9.4 MB (9,392,123 bytes)"."""
    return f"{size / 1_000_000:.1f} MB ({size:,} bytes)"


def check_row_size(
    what: str,
    markdown: str,
    html: str,
    toc: Sequence[TocEntry],
    others: Iterable[str | None] = (),
    *,
    max_row_bytes: int = MAX_ROW_BYTES,
    max_toc_bytes: int = MAX_TOC_BYTES,
) -> None:
    """Raise ``ArticleParseError`` naming the sizes when the row of this ``what`` ("article", "chapter")
    would reach ``max_row_bytes`` or its table of contents ``max_toc_bytes``."""
    toc_text = toc_json(toc)
    row = stored_row_bytes(markdown, html, toc_text, others)
    toc_size = utf8_bytes(toc_text)
    if row >= max_row_bytes:
        raise ArticleParseError(
            f"this {what} would be stored as a row of {megabytes(row)}: Markdown "
            f"{megabytes(utf8_bytes(markdown))}, HTML {megabytes(utf8_bytes(html))}, table of contents "
            f"{megabytes(toc_size)}. The database refuses a row of {ENTRY_LIMIT_BYTES // MiB} MiB or more, "
            f"so a row must stay under {megabytes(max_row_bytes)}: split the file or shorten its headings. "
            "Nothing of it was stored; the version stored before is kept"
        )
    if toc_size > max_toc_bytes:
        raise ArticleParseError(
            f"this {what}'s table of contents (its h1-h3 headings) is {megabytes(toc_size)}; at most "
            f"{megabytes(max_toc_bytes)} is allowed: shorten its headings or use fewer. Nothing of it was "
            "stored; the version stored before is kept"
        )
