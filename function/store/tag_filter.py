"""A filter on tags, as the read routes take it: ``tags=a,b`` with ``mode=and`` (every tag) or ``mode=or``
(any of them), as a plain value.

The article list and its totals, the tag facets, the feed and the search all filter with this value and
its one SQL form (``function.store.tagged``), so every one of them keeps the same articles. A tag keeps
the articles tagged with it or with a tag below it (``tech/aws`` keeps ``tech/aws/lambda``, not
``tech/awsome``), ignoring case. Standard library only: the read routes build it on the accept path's
side of the app, which loads no database module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_TAGS = 20
MAX_TAG_CHARS = 255  # the longest tag path the tags table holds
MODES = ("and", "or")
DEFAULT_MODE = "and"


class TagFilterProblem(ValueError):
    """What is wrong, and with which part: ``parameter`` is "tags" or "mode", the message the words
    after its name ("holds more than 20 tags")."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter


def normalised(path: str) -> str:
    """A tag path as filters compare it: without surrounding blanks and slashes, in lower case."""
    return path.strip().strip("/").strip().lower()


@dataclass(frozen=True)
class TagFilter:
    """Keep the articles with every tag of ``paths`` (``mode="and"``) or with any of them (``"or"``).
    ``paths`` are normalised, each once, in the order given; build one with ``TagFilter.of``."""

    paths: tuple[str, ...]
    mode: str = DEFAULT_MODE

    @classmethod
    def of(cls, paths: Iterable[str], mode: str | None = None) -> TagFilter | None:
        """The filter on ``paths`` (empty entries ignored); None when none is left, as no filter keeps
        every article. TagFilterProblem for an unknown mode, a tag too long, or more than 20 tags."""
        mode = (mode or DEFAULT_MODE).strip().lower()
        if mode not in MODES:
            raise TagFilterProblem("mode", f"must be {' or '.join(MODES)}")
        kept: dict[str, None] = {}
        for path in paths:
            tag = normalised(path)
            if len(tag) > MAX_TAG_CHARS:
                raise TagFilterProblem("tags", f"holds a tag longer than {MAX_TAG_CHARS} characters")
            if tag:
                kept[tag] = None
        if len(kept) > MAX_TAGS:
            raise TagFilterProblem("tags", f"holds more than {MAX_TAGS} tags")
        return cls(tuple(kept), mode) if kept else None

    def key(self) -> str:
        """One string that names the filter (a cursor remembers it): equal for equal filters."""
        return f"{self.mode}:{','.join(self.paths)}"
