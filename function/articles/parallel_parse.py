"""Parsing many article files on every CPU: the first sync's rendering, in worker processes.

Rendering (markdown-it, Pygments) is pure Python, one CPU at a time per process. ``ArticleParser`` hands
the files to ``multiprocessing`` processes, one ``Pipe`` each, and gives each file's outcome in the files'
order: what ``parse_one`` gives here. Lambda has no ``/dev/shm``, so nothing that needs a semaphore
(``Pool``, ``Queue``, ``Manager``) is used; the processes are started with "spawn" (a fresh interpreter,
not a fork of this process and its threads). Few files, one CPU or ``RENDER_PROCESSES=1``: parsed here.

Images resolve here, where the sync's asset pass lives. A render process gives each image source a marker
reference (a URL source is left as it is) and lists the sources; here they are resolved in order, as a
render here would resolve them, and each marker is replaced by the stored reference it stands for. Should
a source not resolve as the marker foretold (a missing image is left as written), the file is rendered
here with those answers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing
import os
import re
import secrets
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from function.articles.images import REFERENCE_SCHEME, ImageResolver, key_of, stored_reference
from function.articles.parse import MAX_HTML_BYTES, parse_article
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError

log = logging.getLogger(__name__)

# Below this many files to render, the work stays here: starting the processes costs about what a few
# articles take to render.
MIN_FILES_FOR_PROCESSES = 8
# Files given out and not yet answered in order, per process.
_AHEAD_PER_PROCESS = 2
# A URL source (a scheme, or //host) stays as written; every other source is offered to the resolver.
_URL_SOURCE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//")
# A marker is a well-formed stored reference (the renderer keeps nothing else) that no image has: a
# random 56-hex-digit prefix per file, the source's number in 8 more, and an extension no image takes.
_MARKER_EXTENSION = "marker"


@dataclass(frozen=True)
class ParseOptions:
    """What ``parse_article`` is given besides the file (the worker's settings)."""

    articles_dir: str = "articles"
    allow_raw_html: bool = False
    timezone: tzinfo | None = None
    asset_base_url: str | None = None


@dataclass(frozen=True)
class FileToParse:
    path: str
    sha: str
    content: bytes
    resolves_images: bool = False  # its image sources go to the parse's resolver


Outcome = ParsedArticle | ArticleParseError
# The image resolver of one file (``function.assets``: each article records what it resolved).
ResolverFor = Callable[[FileToParse], ImageResolver]


def parse_one(options: ParseOptions, file: FileToParse, resolve: ImageResolver | None = None) -> Outcome:
    """``parse_article`` of one file; its ``ArticleParseError`` is returned rather than raised."""
    try:
        return parse_article(
            file.path,
            file.sha,
            file.content,
            articles_dir=options.articles_dir,
            allow_raw_html=options.allow_raw_html,
            timezone=options.timezone,
            asset_base_url=options.asset_base_url,
            resolve_image=resolve,
        )
    except ArticleParseError as exc:
        return exc


def process_count(setting: int | None) -> int:
    """How many render processes: ``setting`` when given (0 or 1: none), else one per CPU this process
    may use (Lambda gives one per 1,769 MB of memory)."""
    if setting is not None:
        return max(setting, 0)
    return max(len(os.sched_getaffinity(0)), 1)


class ArticleParser:
    """Parses files in order, in render processes when there are enough files and CPUs to share. The
    processes start with the first batch worth them and serve every later batch (one sync's chunks);
    leaving the ``with`` block ends them."""

    def __init__(self, options: ParseOptions, processes: int) -> None:
        self._options = options
        self.processes = processes if processes >= 2 else 0
        self._children: list[tuple[BaseProcess, Connection]] = []
        self._resolver_for: ResolverFor | None = None

    def __enter__(self) -> ArticleParser:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.close(kill=exc is not None)

    def start(self, files: int) -> None:
        """Start the processes now if ``files`` files are worth them (else at the first batch that is)."""
        if self._children or not self.processes or files < MIN_FILES_FOR_PROCESSES:
            return
        context = multiprocessing.get_context("spawn")
        for _ in range(self.processes):
            here, there = context.Pipe()
            child = context.Process(target=_serve, args=(there, self._options), name="render", daemon=True)
            child.start()
            there.close()
            self._children.append((child, here))
        log.info("Render processes started", extra={"processes": self.processes})

    def close(self, *, kill: bool = False) -> None:
        """End the processes (``kill``: at once, their work abandoned)."""
        for child, pipe in self._children:
            pipe.close()  # a process leaves at the end of its pipe
            if kill:
                child.kill()
        for child, _ in self._children:
            child.join()
        self._children = []

    def parse(
        self,
        files: Iterable[FileToParse],
        *,
        expected: int | None = None,
        resolver_for: ResolverFor | None = None,
    ) -> Generator[Outcome, None, None]:
        """Each file's outcome, in order. ``expected``: how many files ``files`` yields, when it is a
        stream. ``resolver_for``: the image resolver of each file that ``resolves_images`` (called here)."""
        self._resolver_for = resolver_for
        count = expected if expected is not None else len(files) if isinstance(files, Sequence) else None
        if not self.processes or (count is not None and count < MIN_FILES_FOR_PROCESSES):
            return (parse_one(self._options, file, self._resolver(file)) for file in files)
        self.start(MIN_FILES_FOR_PROCESSES)
        return self._spread(iter(files))

    def _spread(self, files: Iterator[FileToParse]) -> Generator[Outcome, None, None]:
        # Each process has one file at most: neither side ever waits to send while the other does. Past
        # ``window`` files given out and not yet answered in order, no more are: what waits behind a slow
        # file (a process still starting, a long article) stays bounded.
        working: dict[Connection, int] = {}  # pipe -> the number of the file its process renders
        given: dict[int, FileToParse] = {}
        done: dict[int, Any] = {}
        sent = next_out = 0
        window, exhausted = _AHEAD_PER_PROCESS * len(self._children), False
        try:
            while True:
                for _, pipe in self._children:
                    if pipe in working or exhausted or sent - next_out >= window:
                        continue
                    if (file := next(files, None)) is None:
                        exhausted = True
                        break
                    with _lost_process():
                        pipe.send(file)
                    working[pipe], given[sent], sent = sent, file, sent + 1
                while next_out in done:
                    yield self._outcome(given.pop(next_out), *done.pop(next_out))
                    next_out += 1
                if not working:
                    if exhausted:
                        return
                    continue  # what was yielded made room: give out more
                for ready in wait(list(working)):
                    assert isinstance(ready, Connection)
                    with _lost_process():
                        done[working.pop(ready)] = ready.recv()
        except BaseException:  # also when the caller stops early: the processes' work is abandoned
            self.close(kill=True)
            raise

    def _outcome(self, file: FileToParse, outcome: Outcome, sources: list[str], prefix: str) -> Outcome:
        """The outcome of ``file`` as rendered here: its image sources resolved, markers replaced."""
        if not sources:
            return outcome
        resolve = self._resolver(file)
        assert resolve is not None
        answers = [resolve(source) for source in sources]
        foretold = all(
            reference is None if _URL_SOURCE.match(source) else reference is not None and key_of(reference)
            for source, reference in zip(sources, answers, strict=True)
        )
        if foretold and isinstance(outcome, ParsedArticle):
            marker = re.compile(
                rf"{re.escape(REFERENCE_SCHEME + prefix)}([0-9a-f]{{8}})\.{_MARKER_EXTENSION}"
            )
            html = marker.sub(lambda m: str(answers[int(m[1], 16)]), outcome.content_html)
            if len(html.encode("utf-8", "surrogatepass")) <= MAX_HTML_BYTES:
                return dataclasses.replace(outcome, content_html=html)
        replay = iter(answers)
        return parse_one(self._options, file, lambda _source: next(replay))

    def _resolver(self, file: FileToParse) -> ImageResolver | None:
        if not file.resolves_images:
            return None
        if self._resolver_for is None:
            raise ValueError(f"{file.path}: resolves images, but the parse was given no resolver")
        return self._resolver_for(file)


@contextlib.contextmanager
def _lost_process() -> Iterator[None]:
    """A pipe that ends or breaks: its process ended (killed, out of memory, a crash)."""
    try:
        yield
    except (EOFError, OSError):
        raise RuntimeError("a render process ended without answering") from None


def _serve(pipe: Connection, options: ParseOptions) -> None:
    """A render process: a file in, its outcome out with the image sources it met and their markers'
    prefix, until the pipe ends."""
    while True:
        try:
            file: FileToParse = pipe.recv()
        except EOFError:
            return
        markers = _Markers()
        outcome = parse_one(options, file, markers if file.resolves_images else None)
        pipe.send((outcome, markers.sources, markers.prefix))


class _Markers:
    """A render process's image resolver: a marker reference for each source but a URL, every source
    listed."""

    def __init__(self) -> None:
        self.prefix = secrets.token_hex(28)
        self.sources: list[str] = []

    def __call__(self, source: str) -> str | None:
        self.sources.append(source)
        if _URL_SOURCE.match(source):
            return None
        return stored_reference(f"{self.prefix}{len(self.sources) - 1:08x}.{_MARKER_EXTENSION}")
