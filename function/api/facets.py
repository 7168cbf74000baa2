"""Counting articles by tag path, for ``/tags`` and ``/articles/tag-facets``.

A path counts the articles tagged with it or with a tag below it, each article once: ``tech`` counts an
article tagged ``tech/aws`` and ``tech/gcp`` once, and parents that no article names itself are counted
too. Paths are counted as written (``AWS`` and ``aws`` are two entries), as articles show their tags.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any


def tag_sets(pairs: Iterable[tuple[int, str]]) -> Counter[frozenset[str]]:
    """(article id, tag path) pairs → each distinct set of tags → how many articles have exactly it."""
    paths_of: dict[int, set[str]] = {}
    for article_id, path in pairs:
        paths_of.setdefault(article_id, set()).add(path)
    return Counter(frozenset(paths) for paths in paths_of.values())


def path_counts(sets: Iterable[tuple[frozenset[str], int]]) -> Counter[str]:
    """Tag sets with how many articles have each → every path and each of its parents → how many
    articles have it or a tag below it. A blog has far fewer tag sets than articles, so the parents are
    worked out once per set."""
    counts: Counter[str] = Counter()
    for tags, articles in sets:
        below: set[str] = set()
        for tag in tags:
            parts = tag.strip("/").split("/")
            below.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        for path in below:
            counts[path] += articles
    return counts


def tag_counts(pairs: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    """``[{"path", "count"}]`` by path (the ``/tags`` answer), from (article id, tag path) pairs."""
    counts = path_counts(tag_sets(pairs).items())
    return [{"path": path, "count": counts[path]} for path in sorted(counts)]


def facet_counts(sets: Iterable[tuple[frozenset[str], int]]) -> list[dict[str, Any]]:
    """``[{"path", "count"}]`` largest count first, then by path (the ``tag-facets`` answer), from tag
    sets with how many articles have each; a path no article has is absent, so no count is 0."""
    counts = path_counts(sets)
    return [{"path": path, "count": counts[path]} for path in sorted(counts, key=lambda p: (-counts[p], p))]
