"""Counting articles by tag path, for ``/tags`` and ``/articles/tag-facets``.

A path counts the articles tagged with it or with a tag below it, each article once: ``tech`` counts an
article tagged ``tech/aws`` and ``tech/gcp`` once, and parents that no article names itself are counted
too. Paths are counted as written (``AWS`` and ``aws`` are two entries), as articles show their tags.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any


def path_counts(pairs: Iterable[tuple[int, str]]) -> Counter[str]:
    """(article id, tag path) pairs → every path and each of its parents → how many articles have it
    or a tag below it. Articles with the same tags are counted together: a blog has far fewer tag sets
    than articles, so the parents are worked out once per set."""
    paths_of: dict[int, list[str]] = {}
    for article_id, path in pairs:
        paths_of.setdefault(article_id, []).append(path)
    counts: Counter[str] = Counter()
    for tags, articles in Counter(frozenset(paths) for paths in paths_of.values()).items():
        below: set[str] = set()
        for tag in tags:
            parts = tag.strip("/").split("/")
            below.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        for path in below:
            counts[path] += articles
    return counts


def tag_counts(pairs: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    """``[{"path", "count"}]`` by path (the ``/tags`` answer)."""
    counts = path_counts(pairs)
    return [{"path": path, "count": counts[path]} for path in sorted(counts)]


def facet_counts(pairs: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    """``[{"path", "count"}]`` largest count first, then by path (the ``tag-facets`` answer); a path no
    article of ``pairs`` has is absent, so no count is 0."""
    counts = path_counts(pairs)
    return [{"path": path, "count": counts[path]} for path in sorted(counts, key=lambda p: (-counts[p], p))]
