"""Counting articles by tag path, for ``/tags`` and ``/articles/tag-facets``.

A path counts the articles tagged with it or with a tag below it, each article once: ``tech`` counts an
article tagged ``tech/aws`` and ``tech/gcp`` once, and parents that no article names itself are counted
too. Paths are counted as written (``AWS`` and ``aws`` are two entries), as articles show their tags.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def articles_by_path(pairs: Iterable[tuple[int, str]]) -> dict[str, set[int]]:
    """(article id, tag path) pairs → every path and each of its parents → the articles below it."""
    below: dict[str, set[int]] = {}
    for article_id, path in pairs:
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts) + 1):
            below.setdefault("/".join(parts[:depth]), set()).add(article_id)
    return below


def tag_counts(pairs: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    """``[{"path", "count"}]`` by path (the ``/tags`` answer)."""
    below = articles_by_path(pairs)
    return [{"path": path, "count": len(below[path])} for path in sorted(below)]


def facet_counts(pairs: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    """``[{"path", "count"}]`` largest count first, then by path (the ``tag-facets`` answer); a path no
    article of ``pairs`` has is absent, so no count is 0."""
    below = articles_by_path(pairs)
    ordered = sorted(below, key=lambda path: (-len(below[path]), path))
    return [{"path": path, "count": len(below[path])} for path in ordered]
