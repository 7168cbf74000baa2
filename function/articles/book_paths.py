"""Which repository paths belong to a Zenn book, and Zenn's naming rules (standard library only: the
sources use it to list book files).

A book is a folder ``books/<book-slug>/`` holding ``config.yaml`` (or ``config.yml``), chapter files
(``*.md``) and an optional cover image (``cover.png``, ``.jpg``, ``.jpeg``, ``.webp``, ``.gif``), as
Zenn's CLI reads it. Folders starting with ``.`` are not books; files named as ``is_ignored_name`` says
(``_draft.md``, ``.hidden.md``, ``README.md``) are not chapters. Deeper files (``books/x/images/a.png``)
are not part of the listing: the book itself never reads them.

The rules of the names are Zenn's own (``zenn-model``'s ``validateSlug`` and ``validateChapterSlug``):
a book slug is 12-50 characters of ``a-z 0-9 - _``; a chapter slug 1-50 of the same, and a numbered
chapter file is ``<number>.<chapter-slug>.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from function.articles.ignored import is_ignored_name

BOOKS_DIR = "books"
CONFIG_NAMES = ("config.yaml", "config.yml")  # Zenn reads the first that exists
COVER_NAMES = tuple(f"cover{ext}" for ext in (".png", ".jpg", ".jpeg", ".webp", ".gif"))

_BOOK_SLUG_RE = re.compile(r"[0-9a-z_-]{12,50}")
# Listed chapters may keep a number in front (``1.intro``), as Zenn allows.
_CHAPTER_SLUG_RE = re.compile(r"[0-9a-z_-]{1,50}|[0-9]+\.[0-9a-z_-]{1,50}")
# At most 9 digits: a number any chapter list could need, and one int() reads in no time.
_NUMBERED_RE = re.compile(r"([0-9]{1,9})\.([^.]*)")


@dataclass(frozen=True)
class BookPath:
    """A file of a book: the book folder's name and the file's name in it."""

    book: str
    name: str

    @property
    def is_config(self) -> bool:
        return self.name in CONFIG_NAMES

    @property
    def is_cover(self) -> bool:
        return self.name in COVER_NAMES

    @property
    def is_chapter(self) -> bool:
        return self.name.endswith(".md")


def book_path(path: str) -> BookPath | None:
    """``books/<folder>/<name>`` when it is a config, a chapter or a cover of a book folder, else None."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != BOOKS_DIR:
        return None
    folder, name = parts[1], parts[2]
    if not folder or folder.startswith("."):
        return None
    found = BookPath(folder, name)
    if found.is_config or found.is_cover or (found.is_chapter and not is_ignored_name(name)):
        return found
    return None


def is_book_path(path: str) -> bool:
    return book_path(path) is not None


def book_slug_error(slug: str) -> str | None:
    """Why ``slug`` cannot name a Zenn book, or None when it can."""
    if _BOOK_SLUG_RE.fullmatch(slug):
        return None
    return (
        f"book folder {slug!r} is not a valid slug: Zenn wants 12 to 50 characters of lower-case"
        " letters a-z, digits, '-' and '_'"
    )


def chapter_slug_error(slug: str) -> str | None:
    """Why ``slug`` cannot name a chapter, or None when it can."""
    if _CHAPTER_SLUG_RE.fullmatch(slug):
        return None
    return (
        f"chapter slug {slug!r} is not valid: Zenn wants 1 to 50 characters of lower-case letters a-z,"
        " digits, '-' and '_'"
    )


def numbered_chapter(name: str) -> tuple[int, str] | None:
    """``(number, slug)`` of a chapter file named ``<number>.<slug>.md``, else None."""
    match = _NUMBERED_RE.fullmatch(name.removesuffix(".md"))
    if match is None or not name.endswith(".md"):
        return None
    return int(match.group(1)), match.group(2)
