"""How a list request pages: by number (``page``, ``perPage``) or by cursor (``limit``, ``cursor``).

By number is what the blog's original front end asks for: ``page`` counts from 1, ``perPage`` is 1 to 500
or ``all`` (= 500), default 10, and the answer carries the totals its numbered pager needs. By cursor is
the keyset walk, stable while articles are added. One request uses one way: naming a parameter of each is
a 400, since the two answers could not both be right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from function.errors import BadRequest

NUMBER_PARAMS = ("page", "perPage")
CURSOR_PARAMS = ("limit", "cursor")
DEFAULT_PER_PAGE = 10
MAX_PER_PAGE = 500
ALL = "all"  # perPage=all: as many as a page may hold
# Far past any blog's last page, yet small enough that the offset stays a plain 64-bit integer.
MAX_PAGE = 1_000_000_000


@dataclass(frozen=True)
class PageNumber:
    """Page ``page`` (from 1) of ``per_page`` articles."""

    page: int
    per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    def total_pages(self, total: int) -> int:
        """How many pages ``total`` articles fill (0 when there is none)."""
        return -(-total // self.per_page)


def page_number(args: Mapping[str, str]) -> PageNumber | None:
    """The page asked for by number; None when the request pages by cursor (or names neither, which is
    the cursor form's first page). BadRequest for a mix of both ways, or a bad number."""
    by_number = [name for name in NUMBER_PARAMS if name in args]
    if not by_number:
        return None
    by_cursor = [name for name in CURSOR_PARAMS if name in args]
    if by_cursor:
        raise BadRequest(
            f"'{by_number[0]}' and '{by_cursor[0]}' page in two different ways: use page and perPage, "
            "or limit and cursor"
        )
    page = _whole(args.get("page"), "page", default=1, high=MAX_PAGE)
    per_page_text = args.get("perPage")
    if per_page_text is not None and per_page_text.strip().lower() == ALL:
        return PageNumber(page, MAX_PER_PAGE)
    return PageNumber(page, _whole(per_page_text, "perPage", default=DEFAULT_PER_PAGE, high=MAX_PER_PAGE))


def _whole(value: str | None, name: str, *, default: int, high: int) -> int:
    if value is None:
        return default
    if not (value.isascii() and value.isdigit() and len(value) <= len(str(high)) and 1 <= int(value) <= high):
        also = f" or '{ALL}'" if name == "perPage" else ""
        raise BadRequest(f"'{name}' must be a whole number from 1 to {high}{also}")
    return int(value)
