"""Files in the articles folder that are not articles (standard library only: the sources use it)."""

from __future__ import annotations


def is_ignored_name(name: str) -> bool:
    """``README.md`` (any case), or a name starting with ``.`` or ``_`` (``_template.md``, editor and
    drafts files): not an article, so never listed, fetched, parsed or reported as a failure."""
    return name.lower() == "readme.md" or name.startswith((".", "_"))
