"""Reciprocal rank fusion: one ranking from the lexical and the semantic ones (hybrid search).

Each list contributes ``1 / (k + rank)`` (rank from 1) to every article it holds; the scores of the
lists an article is in add up. Ranks, not scores, are fused, so BM25's unbounded scores and cosine
distances need no common scale. ``k = 60`` is the constant of the method's paper (Cormack, Clarke and
Büttcher, 2009), which damps the weight of the first few ranks.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60


def fused(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> list[tuple[int, float]]:
    """(article id, fused score) best first; ties keep the order in which the articles were first met
    (the first ranking's order before the second's)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, article_id in enumerate(dict.fromkeys(ranking), start=1):
            scores[article_id] = scores.get(article_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def fused_distance(score: float) -> float:
    """The answer's ``distance`` in hybrid mode: ``1 / (1 + score)``, smaller for a better fused rank."""
    return 1.0 / (1.0 + score)
