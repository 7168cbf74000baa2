"""BM25 over an article's title, tags, description and body, as the lexical index ranks it.

The four fields are folded into one weighted document (the simple form of BM25F): a term's frequency
is the sum over the fields of its count times the field's weight, and the document's length the sum
of the fields' term counts times the same weights. A term in the title or a tag therefore counts
three times a term of the body, and one in the description twice. The database stores, per term and
block of articles, each article's weighted frequency and weighted length, packed
(``function.search.postings``, written by ``function.store.search_index``), and a query's score is
summed over the decoded entries (``function.store.search_reads``); this module holds the numbers
both sides agree on.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from function.search.tokens import term_counts

TITLE_WEIGHT = 3
TAGS_WEIGHT = 3
DESCRIPTION_WEIGHT = 2
BODY_WEIGHT = 1

# BM25's usual constants: term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75

# Distinct terms of one query that are looked up (a 500-character Japanese query has ~500 bigrams;
# past the first hundred they add little but cost every statement a longer IN list).
MAX_QUERY_TERMS = 100

# What the terms were made with: stored beside each indexed article, so a change of the tokeniser or
# of the weights is visible (``blog-api search status``) and ``sync --rebuild`` makes it current.
INDEX_VERSION = 2


@dataclass(frozen=True)
class IndexedDocument:
    """One article as the index holds it: weighted frequency per term, and its weighted length."""

    frequencies: dict[str, int]
    length: int


def indexed_document(title: str, tags: Sequence[str], description: str | None, body: str) -> IndexedDocument:
    """The weighted terms of an article's fields. ``body`` is its Markdown (never its HTML): code,
    math and URLs are words like any other."""
    weighted: Counter[str] = Counter()
    length = 0
    for text, weight in (
        (title, TITLE_WEIGHT),
        (" ".join(tag.replace("/", " ") for tag in tags), TAGS_WEIGHT),
        (description or "", DESCRIPTION_WEIGHT),
        (body, BODY_WEIGHT),
    ):
        counts = term_counts(text)
        for term, count in counts.items():
            weighted[term] += count * weight
        length += sum(counts.values()) * weight
    return IndexedDocument(dict(weighted), length)


def idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency, in the form that is never negative (Lucene's)."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))


def distance(score: float) -> float:
    """The answer's ``distance`` for a BM25 score: ``1 / (1 + score)``, in (0, 1], smaller for a better
    match; monotone, so ordering by it is ordering by score."""
    return 1.0 / (1.0 + max(score, 0.0))
