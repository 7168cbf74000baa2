"""Writing what was read: articles committed in bounded transactions, parse failures remembered by blob."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from function.articles.parsed import ParsedArticle
from function.store.batching import TRANSACTION_MAX_ARTICLES, TRANSACTION_MAX_BYTES, transaction_batches
from function.store.records import RememberedFailure, StoredArticle
from function.worker.changes import ReaderChanges
from function.worker.sync.plan import Known
from function.worker.sync.ports import ArticleWrites
from function.worker.sync.reading import ReadTally

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
    ) -> None:
        self._store = store
        self._clock = clock
        self._batch_max_articles = batch_max_articles
        self._batch_max_bytes = batch_max_bytes

    def apply(
        self,
        user_id: int,
        parsed: Sequence[ParsedArticle],
        archive: Sequence[str],
        index: Mapping[str, StoredArticle],
        changes: ReaderChanges,
    ) -> tuple[int, int]:
        """Commit ``parsed`` in bounded transactions, archiving in the last one; (written, archived).
        What readers see change is added to ``changes``.

        The index was read under the user's lock, which is still held: apply need not read it again
        (the batches write disjoint slugs, so each one's part of the index is still what is stored).
        Each batch is committed on its own and kept if a later one fails or the run is cut short."""
        batches = list(transaction_batches(parsed, self._batch_max_articles, self._batch_max_bytes))
        written = archived = 0
        for number, batch in enumerate(batches or [[]], start=1):
            last = number == max(len(batches), 1)
            result = self._store.apply(user_id, batch, archive if last else [], self._clock(), index=index)
            written += result.written
            archived += result.archived
            changes.add(result)
        return written, archived

    def remember_failures(self, user_id: int, read: ReadTally, known: Known) -> None:
        """Remember this read's parse failures by blob; forget those of files that now parse, changed,
        or are gone (only from a complete listing). No statement when nothing changed."""
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
            self._store.remember_failures(user_id, new, forget)
