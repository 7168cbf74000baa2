"""``blog-api dates import``: a user's articles dated once from a clone's git history.

The history is read from a local clone of the repository (``git clone``; a GitHub repository has no
dates the App can read in one request), by the same ``git log`` a folder source runs. The dates are set
under the user's sync lock, so no sync writes meanwhile; which dates may be set is the store's rule
(``function.store.history_dates``): only the first sync's stand-ins, never a date already served.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from function.articles.article_paths import slug_for_path
from function.errors import BlogApiError
from function.sources.folder import DirectorySource
from function.store.history_dates import DatesImported, HistoryDateQueries
from function.store.locks import LockQueries
from function.store.users import UserQueries


@dataclass(frozen=True)
class HistoryRead:
    """What the clone gave: which folder was read as what, and the dates by slug."""

    described: str
    dates: dict[str, datetime]


def read_history(clone: Path, articles_dir: str) -> HistoryRead:
    """The articles' dates of ``clone`` (its root, or its articles folder) by slug. BlogApiError, in
    words, when the folder has articles but no git history for them (not a clone)."""
    source = DirectorySource(clone, articles_dir)
    layout = source.layout()
    by_path = source.history()
    dates = {slug: when for path, when in by_path.items() if (slug := slug_for_path(path, articles_dir))}
    if not dates:
        raise BlogApiError(
            f"no git history for the articles of {layout.root}: --from takes a clone of the repository "
            "(git clone https://github.com/OWNER/NAME), whose log says when each article file was added"
        )
    return HistoryRead(layout.described, dates)


def import_dates(
    users: UserQueries,
    locks: LockQueries,
    dates: HistoryDateQueries,
    user_name: str,
    history: HistoryRead,
    *,
    lock_timeout_s: float = 25.0,
) -> DatesImported:
    """Set the dates of ``history`` on ``user_name``'s articles, under the user's lock."""
    user = users.get_user(user_name)
    if user is None:
        raise BlogApiError(f"no user named {user_name!r} (`blog-api users list` shows who exists)")
    with locks.user_lock(user.id, lock_timeout_s):
        return dates.import_history_dates(user.id, history.dates)
