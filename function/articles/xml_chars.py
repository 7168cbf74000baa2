"""Characters that XML 1.0 forbids, kept out of what the feed and the sitemap carry.

XML 1.0 allows tab, line feed, carriage return and U+0020 to U+10FFFF except the surrogates and U+FFFE /
U+FFFF. One article holding any other (a C0 control pasted from a terminal, U+FFFE from a broken
conversion) would make the Atom feed ill-formed for every reader of it, so they are removed where an
article is read, with a warning, and once more where a document is built (articles stored before).
"""

from __future__ import annotations

import re

FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# Vertical tab and form feed are whitespace to Markdown (a fence's info string splits on them): they
# become a space, so the article renders as before; the others go.
_AS_SPACE = frozenset("\x0b\x0c")


def without_forbidden(text: str) -> tuple[str, int]:
    """``text`` without the characters XML 1.0 forbids, and how many there were."""
    return FORBIDDEN.subn(lambda found: " " if found.group() in _AS_SPACE else "", text)


def removal_warning(count: int) -> str:
    return (
        f"removed {count} character(s) that XML 1.0 forbids (control characters, U+FFFE, U+FFFF; "
        "a form feed or vertical tab became a space)"
    )
