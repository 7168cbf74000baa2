"""The tag filter of a read request: ``tags=a,b`` (comma-separated tag paths, each URL-encoded) and
``mode=and|or``, as one ``TagFilter`` that the list, its totals, the facets, the feed and the search all
apply (``function.store.tag_filter``). ``tag=PATH`` stays the one-tag form beside it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from function.errors import BadRequest

if TYPE_CHECKING:
    from function.store.tag_filter import TagFilter

# Room for 20 tags of the longest path (255 characters) and their commas. The query string is decoded
# before it is split: a tag holding a comma cannot be named in ``tags`` (``tag=`` can).
MAX_TAGS_CHARS = 20 * 256


def tag_filter(args: Mapping[str, str]) -> TagFilter | None:
    """The filter ``tags`` and ``mode`` ask for; None without tags (``mode`` alone filters nothing).
    BadRequest naming the parameter for an unknown mode, more than 20 tags, or one too long."""
    # Imported here: the accept path loads the read routes, and loads nothing of the store it does not
    # need at start-up.
    from function.store.tag_filter import TagFilter, TagFilterProblem

    text = args.get("tags") or ""
    if len(text) > MAX_TAGS_CHARS:
        raise BadRequest(f"'tags' is longer than {MAX_TAGS_CHARS} characters")
    mode = args.get("mode") or None
    try:
        return TagFilter.of(text.split(","), mode)
    except TagFilterProblem as problem:
        raise BadRequest(f"'{problem.parameter}' {problem}") from None
