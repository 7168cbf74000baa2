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

from collections.abc import Iterable, Mapping, Sequence
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
    rows = sorted(entries)
    return records_of([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]).tobytes()


def records_of(docs: Sequence[int], frequencies: Sequence[int], lengths: Sequence[int]) -> Records:
    """Records of parallel columns, in the given order; frequencies and lengths capped."""
    records = np.empty(len(docs), dtype=RECORD)
    records["doc"] = np.asarray(docs, dtype=np.int64)
    records["frequency"] = np.minimum(np.asarray(frequencies, dtype=np.int64), MAX_FREQUENCY)
    records["length"] = np.minimum(np.asarray(lengths, dtype=np.int64), MAX_LENGTH)
    return records


def merged(packed: bytes | None, drop: Iterable[int], add: Records) -> bytes:
    """A row's value with the entries of the docs in ``drop`` and in ``add`` (records sorted by doc)
    removed, then ``add``'s put in, sorted by doc. Empty bytes: the row has no entry left."""
    if not packed:
        return add.tobytes()
    stored = decode(packed)
    removed = list(drop)
    if not removed and (not len(add) or int(stored["doc"][-1]) < int(add["doc"][0])):
        return packed + add.tobytes()  # new documents after the stored ones: the first sync's case
    gone = np.isin(stored["doc"], np.concatenate([np.asarray(removed, dtype=np.int64), add["doc"]]))
    both = np.concatenate([stored[~gone], add])
    return np.sort(both, order="doc").tobytes()


class Grouped:
    """Entries (doc, frequency, length) gathered per key and packed per key at once: the sort and the
    conversion run in numpy over every entry of a write, not once per row."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, int], int] = {}
        self._keys: list[int] = []
        self._docs: list[int] = []
        self._frequencies: list[int] = []
        self._lengths: list[int] = []

    def add(self, keys: Iterable[tuple[str, int]], doc: int, frequencies: Iterable[int], length: int) -> None:
        """One document's entries: its frequency under each of ``keys`` (in the same order)."""
        ids = self._ids
        start = len(self._keys)
        self._keys += [ids.setdefault(key, len(ids)) for key in keys]
        self._frequencies += frequencies
        added = len(self._keys) - start
        self._docs += [doc] * added
        self._lengths += [length] * added

    def keys(self) -> list[tuple[str, int]]:
        return list(self._ids)

    def records(self) -> dict[tuple[str, int], Records]:
        """Each key's records, sorted by doc."""
        if not self._keys:
            return {}
        keys = np.asarray(self._keys, dtype=np.int64)
        records = records_of(self._docs, self._frequencies, self._lengths)
        order = np.lexsort((records["doc"], keys))
        keys, records = keys[order], records[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        ends = np.r_[starts[1:], len(keys)]
        names = list(self._ids)
        return {names[keys[a]]: records[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)}


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
