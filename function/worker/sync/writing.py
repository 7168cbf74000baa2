"""Writing what was read: articles committed in bounded transactions, parse failures remembered by blob."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from function.articles.parsed import ParsedArticle
from function.store.batching import (
    ARCHIVE_MAX_ARTICLES,
    TRANSACTION_MAX_ARTICLES,
    TRANSACTION_MAX_BYTES,
    transaction_batches,
)
from function.store.bounds import groups
from function.store.records import RememberedFailure, StoredArticle
from function.store.steps import is_store_error
from function.worker.changes import ReaderChanges
from function.worker.sync.plan import Known
from function.worker.sync.ports import ArticleWrites
from function.worker.sync.reading import ReadTally
from function.worker.sync.write_failures import WritePosition, worded, worded_after_commits

Clock = Callable[[], datetime]


class ArticleWriter:
    """Commits parsed articles and archives for one user; each transaction stays within the bounds."""

    def __init__(
        self,
        store: ArticleWrites,
        clock: Clock,
        *,
        batch_max_articles: int = TRANSACTION_MAX_ARTICLES,
        batch_max_bytes: int = TRANSACTION_MAX_BYTES,
        archive_max_articles: int = ARCHIVE_MAX_ARTICLES,
    ) -> None:
        self._store = store
        self._clock = clock
        self._batch_max_articles = batch_max_articles
        self._batch_max_bytes = batch_max_bytes
        self._archive_max_articles = archive_max_articles

    def apply(
        self,
        user_id: int,
        parsed: Sequence[ParsedArticle],
        archive: Sequence[str],
        index: Mapping[str, StoredArticle],
        changes: ReaderChanges,
        position: WritePosition | None = None,
    ) -> tuple[int, int]:
        """Commit ``parsed`` in bounded transactions, archiving in the last one (and, past
        ``ARCHIVE_MAX_ARTICLES``, in more transactions after it); (written, archived). What readers
        see change is added to ``changes``.

        The index was read under the user's lock, which is still held: apply need not read it again
        (the batches write disjoint slugs, so each one's part of the index is still what is stored).
        Each batch is committed on its own and kept if a later one fails or the run is cut short.
        A failing transaction raises an error that says, in words, the step and ``position`` (chunk,
        transaction) it failed in and what this sync committed before it."""
        batches = list(transaction_batches(parsed, self._batch_max_articles, self._batch_max_bytes))
        # TiDB rewrites a whole row to archive it: a mass delete of long articles is bounded like a sync.
        gone = list(groups(archive, max_items=self._archive_max_articles))
        work: list[tuple[Sequence[ParsedArticle], Sequence[str]]] = [(batch, []) for batch in batches]
        if not work:
            work = [([], [])]
        if gone:
            work[-1] = (work[-1][0], gone[0])
            work += [([], group) for group in gone[1:]]
        position = position or WritePosition(chunk=1, chunks=1)
        committed = position.committed
        written = archived = 0
        for number, (batch, archiving) in enumerate(work, start=1):
            here = replace(position, transaction=number, transactions=len(work), committed=committed)
            try:
                result = self._store.apply(user_id, batch, archiving, self._clock(), index=index)
            except Exception as exc:
                if not is_store_error(exc):
                    raise
                raise worded(exc, here) from exc
            committed += len(batch)
            written += result.written
            archived += result.archived
            changes.add(result)
        return written, archived

    def now(self) -> datetime:
        """The sync's clock, for what is written beside the articles (the images' rows)."""
        return self._clock()

    def remember_failures(self, user_id: int, read: ReadTally, known: Known, committed: int = 0) -> None:
        """Remember this read's parse failures by blob; forget those of files that now parse, changed,
        or are gone (only from a complete listing). No statement when nothing changed. ``committed``:
        the articles this sync committed before, for the words of an error."""
        new = [
            RememberedFailure(slug, file.path, file.sha, message)
            for slug, file, message in read.parse_failures
            if known.failures.get(slug) != RememberedFailure(slug, file.path, file.sha, message)
        ]
        still_failing = {f.path for f in read.failures}
        parsed = set(read.publish)
        forget = [
            slug
            for slug, failure in known.failures.items()
            if slug in parsed
            or (read.plan.snapshot.complete and slug not in read.plan.slugs)
            or (slug in read.plan.slugs and failure.path not in still_failing)
        ]
        if new or forget:
            try:
                self._store.remember_failures(user_id, new, forget)
            except Exception as exc:
                if not is_store_error(exc):
                    raise
                raise worded_after_commits(exc, "remembering failed files", committed) from exc
