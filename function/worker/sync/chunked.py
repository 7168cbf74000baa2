"""The sync's loop: changed files read and committed chunk by chunk under the deadline, then summed up.

Each chunk is committed (in bounded transactions) before the next is fetched, so one chunk's contents
are held at a time and a run cut short keeps what it committed. No chunk starts when the deadline
leaves less than the commit margin plus the slowest chunk so far: the files left are reported, nothing
is archived, and the retry reads only those files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from function.aws.deadline import Deadline
from function.sources.port import RepoRef
from function.store.records import StoredArticle
from function.worker.budget import COMMIT_MARGIN_S
from function.worker.changes import ReaderChanges
from function.worker.sync.plan import Known, ReadPlan
from function.worker.sync.reading import Chunk, ChunkReader, ReadTally
from function.worker.sync.summary import LEFT_PATHS_SHOWN, SyncSummary
from function.worker.sync.write_failures import WritePosition
from function.worker.sync.writing import ArticleWriter

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (done, total)


class ChunkedSync:
    """Reads a plan's chunks with a ChunkReader and commits each with an ArticleWriter."""

    def __init__(
        self,
        reader: ChunkReader,
        writer: ArticleWriter,
        *,
        commit_margin_s: float = COMMIT_MARGIN_S,
        read_ahead: bool = True,
    ):
        self._reader = reader
        self._writer = writer
        self._read_ahead = read_ahead
        self.commit_margin_s = commit_margin_s

    def first_chunk(self, repo: RepoRef, plan: ReadPlan, deadline: Deadline) -> Chunk | None:
        """The plan's first chunk, read now when the deadline allows it (None when there is none)."""
        if plan.assets is not None:
            plan.assets.prepare(repo, plan.snapshot)  # the images first, so the articles resolve them
        if not plan.chunks or not deadline.allows(self.commit_margin_s):
            return None
        return self._reader.read(repo, plan, plan.chunks[0], deadline)

    def run(
        self,
        user_id: int,
        repo: RepoRef,
        plan: ReadPlan,
        known: Known,
        deadline: Deadline,
        *,
        first: Chunk | None = None,
        progress: Progress | None = None,
    ) -> SyncSummary:
        """Read and commit the changed files chunk by chunk, then archive what is gone, and sum it up.
        ``first``: the first chunk, already read."""
        index = known.index
        snapshot = plan.snapshot
        if plan.assets is not None:
            plan.assets.prepare(repo, snapshot)  # nothing when the first chunk prepared it
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
        slowest = 0.0
        # The next chunk is downloaded and rendered on another thread while this one is written (the
        # rendering in worker processes, the writes waiting on the database), when the deadline leaves
        # room for both: two chunks are held at a time then, never more.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read-ahead") as ahead:
            next_chunk: Future[Chunk] | None = None
            for number, files in enumerate(chunks):
                if number == 0 and first is not None:
                    chunk = first
                elif next_chunk is not None:
                    chunk, next_chunk = next_chunk.result(), None
                elif not deadline.allows(self.commit_margin_s + slowest):
                    read.left = [f.path for rest in chunks[number:] for f in rest]
                    _log_left(read.left, deadline, self.commit_margin_s + slowest)
                    break
                else:
                    chunk = self._reader.read(repo, plan, files, deadline)
                began = deadline.remaining()
                last = number == len(chunks) - 1
                # This chunk's write and the next one's read and write must all fit before the margin.
                if (
                    self._read_ahead
                    and not last
                    and deadline.allows(self.commit_margin_s + 2 * max(slowest, chunk.read_s))
                ):
                    next_chunk = ahead.submit(self._reader.read, repo, plan, chunks[number + 1], deadline)
                position = WritePosition(chunk=number + 1, chunks=len(chunks), committed=committed)
                w, a = self._writer.apply(
                    user_id, chunk.parsed, archive if last else [], index, changes, position
                )
                written, archived = written + w, archived + a
                committed += len(chunk.parsed)
                read.add(chunk)
                done += len(files)
                if deadline.limited:
                    slowest = max(slowest, chunk.read_s + began - deadline.remaining())
                if progress:
                    progress(done, total)
        if not chunks:
            written, archived = self._writer.apply(user_id, [], archive, index, changes)
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
