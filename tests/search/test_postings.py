"""Packed postings: the bytes a row holds, merging an article's entries in and out, and BM25 over them
agreeing with the formula of ``function.search.lexical``."""

from __future__ import annotations

import math

import pytest

from function.search.lexical import K1, B, idf
from function.search.postings import (
    BLOCK_DOCS,
    MAX_FREQUENCY,
    RECORD_BYTES,
    Grouped,
    block_of,
    bm25,
    decode,
    encode,
    merged,
    records_of,
)


def test_records_are_ten_little_endian_bytes_sorted_by_doc() -> None:
    packed = encode([(7, 3, 120), (2, 1, 40)])
    assert len(packed) == 2 * RECORD_BYTES == 20
    assert packed[:10] == (2).to_bytes(4, "little") + (1).to_bytes(2, "little") + (40).to_bytes(4, "little")
    assert [(int(r["doc"]), int(r["frequency"]), int(r["length"])) for r in decode(packed)] == [
        (2, 1, 40),
        (7, 3, 120),
    ]


def test_a_frequency_past_two_bytes_is_capped() -> None:
    (record,) = decode(encode([(1, 70_000, 80_000)]))
    assert int(record["frequency"]) == MAX_FREQUENCY
    assert int(record["length"]) == 80_000


def test_bytes_that_are_not_whole_records_are_refused() -> None:
    with pytest.raises(ValueError, match="not whole"):
        decode(b"\x00" * 15)


def test_blocks_cut_the_numbers_every_block_docs() -> None:
    assert [block_of(d) for d in (0, BLOCK_DOCS - 1, BLOCK_DOCS, 2 * BLOCK_DOCS + 5)] == [0, 0, 1, 2]


def test_merging_drops_replaces_and_adds_entries() -> None:
    stored = encode([(1, 2, 10), (2, 5, 50), (3, 1, 30)])
    value = merged(stored, drop={2}, add=records_of([9, 3], [1, 4], [90, 31]))
    assert [(int(r["doc"]), int(r["frequency"]), int(r["length"])) for r in decode(value)] == [
        (1, 2, 10),
        (3, 4, 31),
        (9, 1, 90),
    ]
    assert merged(encode([(5, 1, 1)]), drop={5}, add=records_of([], [], [])) == b""  # the row goes
    assert decode(merged(None, drop=(), add=records_of([4], [2], [8])))["doc"].tolist() == [4]


def test_grouped_entries_pack_per_key_sorted_by_doc() -> None:
    grouped = Grouped()
    grouped.add([("b", 0), ("a", 0)], 7, [2, 1], 30)
    grouped.add([("a", 0), ("a", 1)], 3, [5, 9], 12)
    packed = {key: [tuple(int(v) for v in r) for r in records] for key, records in grouped.records().items()}
    assert packed == {("a", 0): [(3, 5, 12), (7, 1, 30)], ("b", 0): [(7, 2, 30)], ("a", 1): [(3, 9, 12)]}
    assert Grouped().records() == {}


def test_bm25_sums_each_terms_share_over_its_entries_in_every_block() -> None:
    documents, average = 300, 50.0

    def share(frequency: int, length: int, containing: int) -> float:
        saturation = frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
        return idf(documents, containing) * saturation

    postings = {
        "lambda": [encode([(1, 3, 40)]), encode([(200, 1, 60)])],  # two blocks
        "cold": [encode([(1, 1, 40), (5, 2, 100)])],
    }
    scores = bm25(postings, documents, average)
    by_doc = dict(zip(scores.docs.tolist(), scores.scores.tolist(), strict=True))
    assert set(by_doc) == {1, 5, 200}
    assert math.isclose(by_doc[1], share(3, 40, 2) + share(1, 40, 2))
    assert math.isclose(by_doc[5], share(2, 100, 2))
    assert math.isclose(by_doc[200], share(1, 60, 2))


def test_bm25_of_no_postings_is_empty() -> None:
    scores = bm25({"nothing": []}, 10, 5.0)
    assert len(scores.docs) == 0 and len(scores.scores) == 0
