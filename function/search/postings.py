"""Packed postings: one term's entries for a block of documents, as bytes, and BM25 over them.

The lexical index numbers each of a user's indexed articles (its ``doc``) and keeps, per term and
block of ``BLOCK_DOCS`` consecutive numbers, one row whose value is the entries of the articles of that
block holding the term: fixed-size little-endian records (doc, weighted frequency, the article's
weighted length), sorted by doc. A query reads its terms' rows and scores the decoded arrays here, with
``function.search.lexical``'s formula and constants.

Why 128 documents a block: on the benchmark's real-shaped corpus (42 KB articles, half Japanese), 500
articles hold 891,753 (term, article) entries but only 48,119 distinct (term, block of 128) pairs
(24,872 for 256, 90,330 for 64). Larger blocks mean fewer rows to write at a first sync, but an edit
rewrites every row of its old and new terms in its block (at most ``BLOCK_DOCS`` records of 10 bytes
each, so ~1,800 rows of at most 1.25 KB for a long article at 128): 128 keeps a first sync's rows
~18 times fewer than one per entry while keeping an edit's rewrite about 2 MB at worst.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from function.search.lexical import K1, B, idf

BLOCK_DOCS = 128

# A weighted frequency is kept up to this (a term repeated 65,535 weighted times saturates BM25 long
# before: its share of the score is within 1e-4 of the limit).
MAX_FREQUENCY = 0xFFFF
MAX_LENGTH = 0xFFFFFFFF

RECORD = np.dtype([("doc", "<u4"), ("frequency", "<u2"), ("length", "<u4")])
RECORD_BYTES = RECORD.itemsize  # 10: no padding in a structured dtype unless asked for

Records = npt.NDArray[np.void]


def block_of(doc: int) -> int:
    """The block a document number belongs to."""
    return doc // BLOCK_DOCS


def decode(packed: bytes) -> Records:
    """The records of one row's value (read-only: a view of the bytes)."""
    if len(packed) % RECORD_BYTES:
        raise ValueError(f"packed postings of {len(packed)} bytes are not whole {RECORD_BYTES}-byte records")
    return np.frombuffer(packed, dtype=RECORD)


def encode(entries: Iterable[tuple[int, int, int]]) -> bytes:
    """The value of a row holding ``entries`` (doc, weighted frequency, weighted length), sorted by doc;
    a frequency above ``MAX_FREQUENCY`` is kept as that."""
    rows = np.array(sorted(entries), dtype=np.int64).reshape(-1, 3)
    records = np.empty(len(rows), dtype=RECORD)
    records["doc"] = rows[:, 0]
    records["frequency"] = np.minimum(rows[:, 1], MAX_FREQUENCY)
    records["length"] = np.minimum(rows[:, 2], MAX_LENGTH)
    return records.tobytes()


def merged(packed: bytes | None, drop: Iterable[int], add: Mapping[int, tuple[int, int]]) -> bytes:
    """A row's value with the entries of the docs in ``drop`` and ``add`` removed, then ``add``'s
    entries (doc → (frequency, length)) put in. Empty bytes: the row has no entry left."""
    removed = set(drop) | set(add)
    kept = (
        [
            (int(r["doc"]), int(r["frequency"]), int(r["length"]))
            for r in decode(packed)
            if int(r["doc"]) not in removed
        ]
        if packed
        else []
    )
    kept += [(doc, frequency, length) for doc, (frequency, length) in add.items()]
    return encode(kept)


@dataclass(frozen=True)
class Scores:
    """BM25 scores of the documents that hold any of a query's terms."""

    docs: npt.NDArray[np.int64]  # ascending
    scores: npt.NDArray[np.float64]


def bm25(postings: Mapping[str, list[bytes]], documents: int, average_length: float) -> Scores:
    """The BM25 score of every document holding any term of ``postings`` (term → its rows' values):
    the sum over the terms of idf times the saturated frequency, idf from the number of entries of the term
    (each document is in one block, so entries are documents)."""
    docs: list[npt.NDArray[np.uint32]] = []
    parts: list[npt.NDArray[np.float64]] = []
    average = max(average_length, 1.0)
    for values in postings.values():
        records = np.concatenate([decode(v) for v in values]) if values else np.empty(0, dtype=RECORD)
        if not len(records):
            continue
        weight = idf(documents, len(records))
        frequency = records["frequency"].astype(np.float64)
        length = records["length"].astype(np.float64)
        saturation = frequency * (K1 + 1.0) / (frequency + length * (K1 * B / average) + K1 * (1.0 - B))
        docs.append(records["doc"])
        parts.append(weight * saturation)
    if not docs:
        return Scores(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
    all_docs = np.concatenate(docs).astype(np.int64)
    unique, inverse = np.unique(all_docs, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=np.concatenate(parts), minlength=len(unique))
    return Scores(unique, totals.astype(np.float64))
