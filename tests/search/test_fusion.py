"""Reciprocal rank fusion, against sums written out by hand."""

from __future__ import annotations

import pytest

from function.search.fusion import RRF_K, fused, fused_distance


def test_an_article_in_both_rankings_adds_both_reciprocal_ranks() -> None:
    ranking = dict(fused([[1, 2, 3], [3, 1]]))
    assert ranking[1] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert ranking[3] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert ranking[2] == pytest.approx(1 / (RRF_K + 2))


def test_best_first_and_each_article_once() -> None:
    order = [article for article, _ in fused([[1, 2, 3, 2], [3, 1, 4]])]
    assert order == [1, 3, 2, 4]


def test_ties_keep_the_first_rankings_order() -> None:
    assert [a for a, _ in fused([[7, 8], [8, 7]])] == [7, 8]


def test_the_distance_falls_as_the_fused_score_rises() -> None:
    assert fused_distance(0.0) == 1.0
    assert fused_distance(2 / (RRF_K + 1)) < fused_distance(1 / (RRF_K + 1)) < 1.0
