"""The parameters of ``GET /users/<name>/articles/search``, checked: ``q``, ``limit``, ``offset`` and
``searchMode`` (the tag filter is the list's, ``function.api.tag_params``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from function.errors import BadRequest

MAX_QUERY_CHARS = 500
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_OFFSET = 200
LEXICAL, SEMANTIC, HYBRID = "lexical", "semantic", "hybrid"
SEARCH_MODES = (LEXICAL, SEMANTIC, HYBRID)


@dataclass(frozen=True)
class SearchParams:
    query: str  # trimmed, 1-500 characters
    limit: int
    offset: int
    mode: str | None  # None: the default (hybrid with embeddings configured, else lexical)


def search_params(args: Mapping[str, str]) -> SearchParams:
    """The search's parameters; BadRequest naming the parameter for a missing, empty or too long
    ``q``, a ``limit`` outside 1-100, an ``offset`` outside 0-200, or an unknown ``searchMode``."""
    query = (args.get("q") or "").strip()
    if not query:
        raise BadRequest("'q' is required: the words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise BadRequest(f"'q' is longer than {MAX_QUERY_CHARS} characters")
    mode = (args.get("searchMode") or "").strip().lower() or None
    if mode is not None and mode not in SEARCH_MODES:
        raise BadRequest(f"'searchMode' must be {', '.join(SEARCH_MODES[:-1])} or {SEARCH_MODES[-1]}")
    return SearchParams(
        query=query,
        limit=_whole(args, "limit", DEFAULT_LIMIT, low=1, high=MAX_LIMIT),
        offset=_whole(args, "offset", 0, low=0, high=MAX_OFFSET),
        mode=mode,
    )


def _whole(args: Mapping[str, str], name: str, default: int, *, low: int, high: int) -> int:
    value = args.get(name)
    if value is None:
        return default
    if not (value.isascii() and value.isdigit() and low <= int(value) <= high):
        raise BadRequest(f"'{name}' must be a whole number from {low} to {high}")
    return int(value)
