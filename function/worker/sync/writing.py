"""Writing what was read: articles committed in bounded transactions, parse failures remembered by blob."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from function.articles.parsed import ParsedArticle
from function.aws.deadline import UNLIMITED, Deadline
from function.store.batching import (
    ARCHIVE_MAX_ARTICLES,
    ARCHIVE_MAX_BYTES,
    TRANSACTION_MAX_ARTICLES,
    TRANSACTION_MAX_BYTES,
    article_bytes,
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


@dataclass
class _Tally:
    committed: int  # articles this sync committed (before this chunk, then with it)
    written: int = 0
    archived: int = 0
    seconds: float = 0.0  # the writes' time, on the deadline's clock


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
        archive_max_bytes: int = ARCHIVE_MAX_BYTES,
        render_fingerprint: str | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._render_fingerprint = render_fingerprint  # what the articles given were rendered with
        self._batch_max_articles = batch_max_articles
        self._batch_max_bytes = batch_max_bytes
        self._archive_max_articles = archive_max_articles
        self._archive_max_bytes = archive_max_bytes

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
        ``ARCHIVE_MAX_ARTICLES`` or ``ARCHIVE_MAX_BYTES`` of rows, in more transactions after it);
        (written, archived). What readers
        see change is added to ``changes``.

        The index was read under the user's lock, which is still held: apply need not read it again
        (the batches write disjoint slugs, so each one's part of the index is still what is stored).
        Each batch is committed on its own and kept if a later one fails or the run is cut short.
        A failing transaction raises an error that says, in words, the step and ``position`` (chunk,
        transaction) it failed in and what this sync committed before it."""
        written, archived, _ = self.apply_stream(user_id, iter(parsed), archive, index, changes, position)
        return written, archived

    def apply_stream(
        self,
        user_id: int,
        parsed: Iterator[ParsedArticle],
        archive: Sequence[str],
        index: Mapping[str, StoredArticle],
        changes: ReaderChanges,
        position: WritePosition | None = None,
        deadline: Deadline = UNLIMITED,
        *,
        reindex: bool = False,
    ) -> tuple[int, int, float]:
        """``apply`` of articles that come one by one (as they are rendered): each transaction is
        committed as soon as it is full, while the next articles render; (written, archived, and the
        time the writes took on ``deadline``'s clock). ``reindex``: index every article for search
        again, unchanged ones too (``sync --rebuild``)."""
        position = position or WritePosition(chunk=1, chunks=1)
        tally = _Tally(position.committed)
        batch: list[ParsedArticle] = []
        batch_bytes = 0
        number = 0
        for article in parsed:
            size = article_bytes(article)
            if batch and (
                len(batch) >= self._batch_max_articles or batch_bytes + size > self._batch_max_bytes
            ):
                number += 1
                self._commit(
                    user_id,
                    batch,
                    [],
                    index,
                    changes,
                    replace(position, transaction=number, transactions=0),
                    tally,
                    deadline,
                    reindex,
                )
                batch, batch_bytes = [], 0
            batch.append(article)
            batch_bytes += size
        gone = self._archive_groups(user_id, archive, replace(position, transaction=number + 1), tally)
        # The last transaction of articles takes the first archive group (a small push is one transaction).
        work: list[tuple[list[ParsedArticle], Sequence[str]]] = [(batch, gone[0] if gone else [])]
        work += [([], group) for group in gone[1:]]
        total = number + len(work)
        for batch_now, archiving in work:
            number += 1
            here = replace(position, transaction=number, transactions=total)
            self._commit(user_id, batch_now, archiving, index, changes, here, tally, deadline, reindex)
        return tally.written, tally.archived, tally.seconds

    def _archive_groups(
        self, user_id: int, archive: Sequence[str], here: WritePosition, tally: _Tally
    ) -> list[list[str]]:
        """``archive`` in groups of at most ``archive_max_articles`` and ``archive_max_bytes`` of rows:
        TiDB rewrites a whole row to archive it, so a mass delete of long articles is cut by the bytes
        the database measures for them (what was archived before needs no measuring)."""
        if not archive:
            return []
        try:
            sizes = self._store.row_bytes(user_id, archive)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            raise worded(exc, replace(here, transactions=0, committed=tally.committed)) from exc
        return list(
            groups(
                archive,
                max_items=self._archive_max_articles,
                weights=[(lambda slug: sizes.get(slug, 0), self._archive_max_bytes)],
            )
        )

    def _commit(
        self,
        user_id: int,
        batch: Sequence[ParsedArticle],
        archiving: Sequence[str],
        index: Mapping[str, StoredArticle],
        changes: ReaderChanges,
        here: WritePosition,
        tally: _Tally,
        deadline: Deadline,
        reindex: bool = False,
    ) -> None:
        began = deadline.remaining()
        try:
            result = self._store.apply(
                user_id,
                batch,
                archiving,
                self._clock(),
                index=index,
                render_fingerprint=self._render_fingerprint,
                reindex=reindex,
            )
        except Exception as exc:
            if not is_store_error(exc):
                raise
            raise worded(exc, replace(here, committed=tally.committed)) from exc
        if deadline.limited:
            tally.seconds += began - deadline.remaining()
        tally.committed += len(batch)
        tally.written += result.written
        tally.archived += result.archived
        changes.add(result)

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
