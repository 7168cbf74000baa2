"""The sync's loop: changed files read and committed chunk by chunk under the deadline, then summed up.

Each chunk's articles are committed in bounded transactions as they are rendered (``pipeline``: the
next ones render while a transaction travels), so a few transactions' worth are held at a time and a run
cut short keeps what it committed. No chunk starts when the deadline leaves less than the commit margin
plus the slowest chunk so far: the files left are reported, nothing is archived, and the retry reads
only those files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

from function.aws.deadline import Deadline
from function.sources.port import RepoRef
from function.store.records import StoredArticle
from function.worker.budget import COMMIT_MARGIN_S
from function.worker.changes import ReaderChanges
from function.worker.sync.pipeline import AHEAD_ARTICLES, AHEAD_BYTES, ChunkPipeline
from function.worker.sync.plan import Known, ReadPlan
from function.worker.sync.reading import ChunkReader, ReadTally
from function.worker.sync.summary import LEFT_PATHS_SHOWN, SyncSummary
from function.worker.sync.write_failures import WritePosition
from function.worker.sync.writing import ArticleWriter

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (done, total)


class ChunkedSync:
    """Reads a plan's chunks with a ChunkReader and commits them with an ArticleWriter as they come."""

    def __init__(
        self,
        reader: ChunkReader,
        writer: ArticleWriter,
        *,
        commit_margin_s: float = COMMIT_MARGIN_S,
        read_ahead: bool = True,
        ahead_bytes: int = AHEAD_BYTES,
        ahead_articles: int = AHEAD_ARTICLES,
    ):
        self._reader = reader
        self._writer = writer
        self._read_ahead = read_ahead
        self._ahead = (ahead_bytes, ahead_articles)
        self.commit_margin_s = commit_margin_s
        self._slowest = 0.0  # the slowest chunk so far (read and written), on the deadline's clock
        self.last_pipeline: ChunkPipeline | None = None  # the latest sync's (tests look at its bound)

    def _pipeline(self, repo: RepoRef, plan: ReadPlan, deadline: Deadline) -> ChunkPipeline:
        self._slowest = 0.0

        def may_read_ahead(read_s: float) -> bool:
            # The chunk being written and the next one's read and write must all fit before the margin.
            return deadline.allows(self.commit_margin_s + 2 * max(self._slowest, read_s))

        pipeline = ChunkPipeline(
            self._reader,
            repo,
            plan,
            deadline,
            read_ahead=self._read_ahead,
            may_read_ahead=may_read_ahead,
            ahead_bytes=self._ahead[0],
            ahead_articles=self._ahead[1],
        )
        self.last_pipeline = pipeline
        return pipeline

    def run(
        self,
        user_id: int,
        repo: RepoRef,
        plan: ReadPlan,
        known: Known,
        deadline: Deadline,
        *,
        progress: Progress | None = None,
    ) -> SyncSummary:
        """Read and commit the changed files chunk by chunk, then archive what is gone, and sum it up."""
        index = known.index
        snapshot = plan.snapshot
        if plan.assets is not None:
            plan.assets.prepare(repo, snapshot)  # the images first, so the articles resolve them
        # A truncated listing may just be missing paths: never archive from it.
        if snapshot.complete:
            archive = [slug for slug, s in index.items() if slug not in plan.slugs and not s.archived]
        else:
            archive = []
            log.warning("Tree listing incomplete; nothing archived", extra={"head_sha": snapshot.head_sha})
        chunks = plan.chunks
        total = len(plan.changed)
        if progress:
            progress(0, total)
        read = ReadTally(plan)
        changes = ReaderChanges()
        written = archived = done = committed = 0
        if not chunks:
            written, archived = self._writer.apply(user_id, [], archive, index, changes)
        else:
            pipeline = self._pipeline(repo, plan, deadline)
            with pipeline:
                for number, files in enumerate(chunks):
                    if not pipeline.reading_on():
                        # Nothing read ahead: this chunk starts now, if it still fits.
                        if not deadline.allows(self.commit_margin_s + self._slowest):
                            read.left = [f.path for rest in chunks[number:] for f in rest]
                            _log_left(read.left, deadline, self.commit_margin_s + self._slowest)
                            break
                        pipeline.start(number)
                    last = number == len(chunks) - 1
                    position = WritePosition(chunk=number + 1, chunks=len(chunks), committed=committed)
                    w, a, write_s = self._writer.apply_stream(
                        user_id,
                        pipeline.articles(),
                        archive if last else [],
                        index,
                        changes,
                        position,
                        deadline,
                        reindex=plan.rebuild,
                    )
                    chunk = pipeline.end().chunk
                    written, archived = written + w, archived + a
                    committed += chunk.parsed
                    read.add(chunk)
                    done += len(files)
                    if deadline.limited:
                        self._slowest = max(self._slowest, chunk.read_s + write_s)
                    if progress:
                        progress(done, total)
        self._writer.remember_failures(user_id, read, known, committed)
        if plan.assets is not None:
            plan.assets.finish(self._writer.now(), complete=snapshot.complete)
        summary = summarise(read, written, archived, index)
        summary.changes = changes
        return summary


def summarise(
    read: ReadTally, written: int, archived: int, index: Mapping[str, StoredArticle]
) -> SyncSummary:
    """The sync's summary from what was read and written, logged as ``Reconciled articles``."""
    plan = read.plan
    failed_paths = {f.path for f in read.failures}
    drafts = 0
    for slug in plan.slugs:
        if slug in read.publish:
            drafts += not read.publish[slug]
        elif (stored := index.get(slug)) is not None and stored.path not in failed_paths:
            drafts += not stored.publish
    summary = SyncSummary(
        warnings=read.warnings,
        drafts=drafts,
        processed=len(plan.slugs) + plan.badly_named,
        fetched=read.fetched,
        head_sha=plan.snapshot.head_sha,
        failures=read.failures,
        written=written,
        archived=archived,
        failed=len(read.failures),
        listing_complete=plan.snapshot.complete,
        left=read.left,
    )
    summary.succeeded = summary.processed - summary.failed - len(summary.left)
    log.info(
        "Reconciled articles",
        extra={**summary.log_fields(), "duration_ms": round((time.monotonic() - plan.started) * 1000, 1)},
    )
    return summary


def _log_left(left: Sequence[str], deadline: Deadline, needed_s: float) -> None:
    log.warning(
        "Time budget reached; files left for the next run",
        extra={
            "left": len(left),
            "left_paths": list(left[:LEFT_PATHS_SHOWN]),
            "remaining_s": round(deadline.remaining(), 1),
            "needed_s": round(needed_s, 1),
        },
    )
