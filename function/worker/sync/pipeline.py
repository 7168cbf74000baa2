"""The first sync's pipeline: chunks downloaded and rendered on a thread while the articles are written.

A large first sync is three kinds of work: downloading (the tarball), rendering (CPU, in the render
processes) and writing (round trips to the database, and this process's CPU to build the statements).
Done one after the other, the render processes idle while a transaction travels, and the database waits
while a chunk renders. Here a reading thread fetches each chunk and feeds its files to the render
processes, and hands the articles over, in order, as they come back; the writes (on the caller's thread)
commit a transaction as soon as one is full. The render processes keep working while it travels.

Memory stays bounded whatever the size of the repository: the reading thread holds one chunk's Markdown
at most (each file let go once a render process has it), and waits when the articles handed over and
not yet taken reach ``ahead_bytes`` (by ``article_bytes``) or ``ahead_articles``: about one transaction
ahead of the writes. It starts the next chunk only when the deadline leaves room to read and write it
(the same rule as before, judged by the caller).

Without read-ahead (``RENDER_PROCESSES=1`` and ``read_ahead=False``, the sequential path) there is no
thread: each article is read when the writes ask for it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from function.articles.parallel_parse import ArticleParser
from function.articles.parsed import ParsedArticle
from function.aws.deadline import Deadline
from function.sources.port import RepoRef
from function.store.batching import TRANSACTION_MAX_ARTICLES, TRANSACTION_MAX_BYTES, article_bytes
from function.worker.sync.plan import ReadPlan
from function.worker.sync.reading import Chunk, ChunkReader

# How far the reading may run ahead of the writes: one transaction's worth of articles, so the render
# processes have work while a transaction is sent, and no more is held.
AHEAD_BYTES = TRANSACTION_MAX_BYTES
AHEAD_ARTICLES = TRANSACTION_MAX_ARTICLES
# How long closing waits for the reading thread to notice it is no longer wanted (it may be in a
# download or waiting on a render process; it stops at its next article).
_JOIN_S = 30.0


@dataclass(frozen=True)
class ChunkEnd:
    """The end of chunk ``number`` (0-based): what it gave besides its articles."""

    number: int
    chunk: Chunk


class _Stopped:
    """The reading started no further chunk (the last one was read, or the deadline said no)."""


@dataclass(frozen=True)
class _Raised:
    error: BaseException


class _Cancelled(Exception):
    """The writes stopped: the reading thread ends at its next hand-over."""


_STOPPED = _Stopped()
Event = ParsedArticle | ChunkEnd | _Stopped


class Handoff:
    """What the reading thread has read and the writes have not taken yet, bounded in bytes and count
    (an article bigger than the bound alone passes: it cannot be split, and refusing it would lose it)."""

    def __init__(self, max_bytes: int, max_articles: int) -> None:
        self._max_bytes = max_bytes
        self._max_articles = max_articles
        self._items: deque[tuple[Any, int]] = deque()
        self._bytes = 0
        self._articles = 0
        self._cancelled = False
        self._changed = threading.Condition()
        self.most_articles = 0  # the most articles ever waiting at once (tests hold it to the bound)

    def put(self, item: Any, weight: int = 0, *, counts: bool = False) -> None:
        """Hand ``item`` over, waiting while the bound is reached; raises _Cancelled once cancelled."""
        with self._changed:
            while not self._cancelled and self._articles and self._full(weight, counts):
                self._changed.wait()
            if self._cancelled:
                raise _Cancelled
            self._items.append((item, weight if counts else -1))
            if counts:
                self._bytes += weight
                self._articles += 1
                self.most_articles = max(self.most_articles, self._articles)
            self._changed.notify_all()

    def put_last(self, item: Any) -> None:
        """Hand over the reading's last word (its end, or its error): never waits, never refused."""
        with self._changed:
            self._items.append((item, -1))
            self._changed.notify_all()

    def get(self) -> Any:
        with self._changed:
            while not self._items:
                self._changed.wait()
            item, weight = self._items.popleft()
            if weight >= 0:
                self._bytes -= weight
                self._articles -= 1
            self._changed.notify_all()
            return item

    def wait_until_full(self, timeout_s: float) -> bool:
        """Wait until the reading may hand over no more (or ``timeout_s`` passed): whether it is full."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._articles >= self._max_articles or self._bytes >= self._max_bytes, timeout_s
            )

    def cancel(self) -> None:
        with self._changed:
            self._cancelled = True
            self._items.clear()
            self._changed.notify_all()

    def _full(self, weight: int, counts: bool) -> bool:
        if not counts:
            return False
        return self._articles >= self._max_articles or self._bytes + weight > self._max_bytes


class ChunkPipeline:
    """One sync's reading of its chunks, ahead of its writes (see the module docstring).

    ``start(number)`` begins reading at chunk ``number``; ``articles`` gives that chunk's articles as they
    come, and ``end`` what else it gave; ``reading_on`` says whether the reading went on to the next
    chunk by itself. ``may_read_ahead(read_s)`` is asked before each further chunk (``read_s``: how long
    the chunk just read took). Use as a context manager: it holds the render processes of the sync."""

    def __init__(
        self,
        reader: ChunkReader,
        repo: RepoRef,
        plan: ReadPlan,
        deadline: Deadline,
        *,
        read_ahead: bool,
        may_read_ahead: Callable[[float], bool],
        ahead_bytes: int = AHEAD_BYTES,
        ahead_articles: int = AHEAD_ARTICLES,
    ) -> None:
        self._reader = reader
        self._repo = repo
        self._plan = plan
        self._deadline = deadline
        self._read_ahead = read_ahead
        self._may_read_ahead = may_read_ahead
        self._ahead = (ahead_bytes, ahead_articles)
        self._parser: ArticleParser = reader.parser()
        # Started now: their interpreters start while the sync opens and lists the repository.
        self._parser.start(len(plan.changed))
        self._events: Iterator[Event] | None = None
        self._peeked: Event | None = None
        self._thread: threading.Thread | None = None
        self.handoff: Handoff | None = None  # the reading thread's, while one runs

    def __enter__(self) -> ChunkPipeline:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.close(failed=exc is not None)

    def start(self, number: int) -> None:
        """Read from chunk ``number`` on (on a thread with read-ahead, else as the writes ask)."""
        self._stop_reading()
        events = self._read_from(number)
        if not self._read_ahead:
            self._events = events
            return
        handoff = Handoff(*self._ahead)
        thread = threading.Thread(target=_run, args=(events, handoff), name="read-ahead", daemon=True)
        self.handoff, self._thread = handoff, thread
        self._events = iter(handoff.get, None)  # get() never answers None: this ends by _STOPPED
        thread.start()

    def reading_on(self) -> bool:
        """Whether the reading under way gives another chunk (waits until the reading knows)."""
        return self._events is not None and not isinstance(self._peek(), _Stopped)

    def articles(self) -> Iterator[ParsedArticle]:
        """The current chunk's articles, in order, as they are read; then ``end`` gives the rest."""
        while isinstance(event := self._peek(), ParsedArticle):
            self._peeked = None
            yield event

    def end(self) -> ChunkEnd:
        """The current chunk's end (after its articles)."""
        event = self._peek()
        if not isinstance(event, ChunkEnd):
            raise RuntimeError("the chunk's articles were not all taken")
        self._peeked = None
        return event

    def close(self, *, failed: bool = False) -> None:
        """Stop the reading (if it still runs) and end the render processes."""
        self._stop_reading()
        self._parser.close(kill=failed)

    def _peek(self) -> Event:
        if self._peeked is None:
            if self._events is None:
                raise RuntimeError("no reading was started")
            event = next(self._events, _STOPPED)
            if isinstance(event, _Raised):
                raise event.error
            self._peeked = event
        return self._peeked

    def _read_from(self, number: int) -> Iterator[Event]:
        chunks = self._plan.chunks
        while True:
            chunk = Chunk(fetched=len(chunks[number]))
            yield from self._reader.articles(
                self._repo, self._plan, chunks[number], self._deadline, self._parser, chunk
            )
            yield ChunkEnd(number, chunk)
            number += 1
            if number >= len(chunks) or not self._read_ahead or not self._may_read_ahead(chunk.read_s):
                yield _STOPPED
                return

    def _stop_reading(self) -> None:
        handoff, thread = self.handoff, self._thread
        self.handoff = self._thread = None
        self._events, self._peeked = None, None
        if handoff is not None:
            handoff.cancel()
        if thread is not None:
            thread.join(_JOIN_S)


def _run(events: Iterator[Event], handoff: Handoff) -> None:
    """The reading thread: every event handed over, in order; an error is handed over to be raised by
    the writes, at its place."""
    try:
        for event in events:
            if isinstance(event, ParsedArticle):
                handoff.put(event, article_bytes(event), counts=True)
            else:
                handoff.put(event)
                if isinstance(event, _Stopped):
                    return
    except _Cancelled:
        close = getattr(events, "close", None)
        if close is not None:
            close()  # the render processes' map is stopped with it
    except BaseException as exc:  # noqa: BLE001 - raised by the writes, where the reading failed
        handoff.put_last(_Raised(exc))
