"""Publication dates from a repository's history, set once on articles that were never given one
(``blog-api dates import``).

What "a date already served" means here, precisely. An article's ``published_at`` comes from, in order:
its front matter, its file name's leading date, the time its file was added in the history (a folder
source in a git work tree), else the moment a sync first writes it published. That last one is a true
publication date for an article published while the blog is served; but a blog's *first* sync writes its
whole backlog at once, and every article of it gets the same moment, which is nobody's publication date.
Those stand-ins are the only served dates this import replaces:

* a stand-in is the date of an article that was dated the moment its row was first written
  (``published_at`` equal to ``created_at``, to the microsecond: a date from the front matter, the file
  name or the history is never exactly that moment) during the blog's first sync, counted as the hour
  that follows the user's first article row (``FIRST_SYNC_WINDOW``);
* every other date is already served and is never moved: a front matter or file-name date, a date set
  by this import or from the history before, and the first-publication moment of an article published
  after the first sync (readers saw it appear then);
* a draft never published has no date yet and gets none here: it is dated when it is first published.

The import is idempotent: a date it sets is no longer a stand-in (it differs from ``created_at``), so a
second run moves nothing. ``updated_at`` is left as it is: the article's content did not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import peewee

from function.store.base import StoreBase, translated
from function.store.batching import KEY_CHUNK_SIZE, batched_transaction
from function.store.bounds import groups, limits_of
from function.store.models import Article

# How long a blog's first sync is taken to last, from its first article row: a first sync of a thousand
# articles takes a minute, or a few Lambda invocations when it is cut by the time budget.
FIRST_SYNC_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class DatesImported:
    """What ``import_history_dates`` did, by slug."""

    dated: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)  # slug -> (was, now)
    kept: list[str] = field(default_factory=list)  # a date already served: not moved
    drafts: list[str] = field(default_factory=list)  # never published: dated when first published
    not_in_history: list[str] = field(default_factory=list)  # stored, but the history has no file for it
    not_synced: list[str] = field(default_factory=list)  # in the history, not in the database (yet)


class HistoryDateQueries(StoreBase):
    @translated
    def import_history_dates(self, user_id: int, added: Mapping[str, datetime]) -> DatesImported:
        """Date the user's articles whose date is a first-sync stand-in by ``added`` (slug -> naive UTC
        time its file was added); every other article is left as it is. The caller holds the user's lock
        (no sync writes meanwhile); the UPDATE checks the stand-in condition again all the same. One
        SELECT, then one transaction (nothing when there is nothing to date)."""
        rows = self._rows(
            Article.select(Article.slug, Article.published_at, Article.created_at).where(
                Article.user == user_id
            )
        )
        result = DatesImported()
        if not rows:
            result.not_synced.extend(sorted(added))
            return result
        first = min(row[2] for row in rows)
        stored = set()
        for slug, published_at, created_at in rows:
            stored.add(slug)
            when = added.get(slug)
            if published_at is None:
                result.drafts.append(slug)
            elif when is None:
                result.not_in_history.append(slug)
            elif published_at == created_at and created_at <= first + FIRST_SYNC_WINDOW:
                if when != published_at:
                    result.dated[slug] = (published_at, when)
            else:
                result.kept.append(slug)
        result.not_synced.extend(sorted(set(added) - stored))
        self._set_dates(user_id, {slug: now for slug, (_, now) in result.dated.items()})
        return result

    def _set_dates(self, user_id: int, dates: Mapping[str, datetime]) -> None:
        if not dates:
            return
        keys = limits_of(self._db).keys(reserved=3)
        # Each slug appears twice (CASE and IN) with its date once: three parameters a slug.
        per_statement = min(keys // 3, KEY_CHUNK_SIZE)
        with batched_transaction(self._db) as tx:
            for chunk in groups(sorted(dates), max_items=max(per_statement, 1)):
                # The column's own text form (SQLite compares the stored text: it must be the same width).
                column = Article.published_at
                when = peewee.Case(Article.slug, [(slug, column.db_value(dates[slug])) for slug in chunk])
                tx.add(
                    Article.update(published_at=when)
                    .where(
                        Article.user == user_id,
                        Article.slug.in_(chunk),
                        Article.published_at == Article.created_at,
                    )
                    .bind(self._db),
                    "setting publication dates",
                )
