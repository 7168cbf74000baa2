"""Parsing and rendering many article files on every CPU: the first sync's work, in worker processes.

A first sync renders every article, and rendering (markdown-it, Pygments) is pure Python: one CPU at a
time per process. ``ArticleParser`` spreads it over ``ForkPool`` processes (fork and pipes only, so it
works inside Lambda, which has no ``/dev/shm``), as many as the CPUs the environment gives, and gives
each file's outcome in the order the files came: exactly what ``parse_article`` gives in this process,
so the articles written are the same bytes either way. A few files are parsed here (forking costs more
than it saves), and so is everything on one CPU or with ``RENDER_PROCESSES=1``.

Images resolve in this process even when their article renders in a child: the asset pass (its
listing, its rows, its uploads) lives here, so a child asks for each image source it meets
(``ForkPool``'s questions) and renders with the answer, the same answer ``parse_article`` gets here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from function.articles.fork_pool import Ask, ForkPool, available_cpus
from function.articles.images import ImageResolver
from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError

# Below this many files to render, the work stays in this process: forking the children and sending
# the files costs a few milliseconds, about what one article takes to render.
MIN_FILES_FOR_PROCESSES = 8


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


def _parse_asking(options: ParseOptions, file: FileToParse, ask: Ask) -> Outcome:
    """``parse_one`` in a worker process: each image source is asked of the parent."""
    return parse_one(options, file, ask if file.resolves_images else None)


def process_count(setting: int | None) -> int:
    """How many render processes: ``setting`` when given (0 or 1: none, render in this process), else
    one per CPU this process may use (``os.sched_getaffinity``)."""
    if setting is not None:
        return max(setting, 0)
    return available_cpus()


class ArticleParser:
    """Parses files in order, in worker processes when there are enough of them and CPUs to share.

    The processes are forked on the first batch worth them and serve every later batch (one sync's
    chunks); leaving the ``with`` block ends them."""

    def __init__(self, options: ParseOptions, processes: int) -> None:
        self._options = options
        self._resolver_for: ResolverFor | None = None
        self._pool: ForkPool[FileToParse, Outcome] = ForkPool(
            functools.partial(_parse_asking, options), processes, answer=self._answer
        )

    @property
    def processes(self) -> int:
        return self._pool.processes

    def __enter__(self) -> ArticleParser:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.close(kill=exc is not None)

    def start(self, files: int) -> None:
        """Fork the processes now if ``files`` files are worth them (else at the first batch that is)."""
        if files >= MIN_FILES_FOR_PROCESSES:
            self._pool.start()

    def close(self, *, kill: bool = False) -> None:
        """End the processes (``kill``: at once, their work abandoned)."""
        self._pool.close(kill=kill)

    def parse(
        self,
        files: Iterable[FileToParse],
        *,
        expected: int | None = None,
        resolver_for: ResolverFor | None = None,
    ) -> Iterator[Outcome]:
        """Each file's outcome, in order. ``expected``: how many files ``files`` yields, when it is a
        stream (fewer than ``MIN_FILES_FOR_PROCESSES`` are parsed in this process). ``resolver_for``:
        the image resolver of each file that ``resolves_images``, called in this process (one parse
        at a time per parser)."""
        self._resolver_for = resolver_for
        count = expected if expected is not None else _length(files)
        if count is not None and count < MIN_FILES_FOR_PROCESSES:
            return (parse_one(self._options, f, self._resolver(f)) for f in files)
        return self._pool.map(files)

    def _resolver(self, file: FileToParse) -> ImageResolver | None:
        if not file.resolves_images:
            return None
        if self._resolver_for is None:
            raise ValueError(f"{file.path}: resolves images, but the parse was given no resolver")
        return self._resolver_for(file)

    def _answer(self, file: FileToParse, src: Any) -> str | None:
        """A worker process's question: the URL for image ``src`` of ``file`` (None: as written)."""
        resolve = self._resolver(file)
        return resolve(str(src)) if resolve is not None else None


def _length(files: Iterable[FileToParse]) -> int | None:
    return len(files) if isinstance(files, Sequence) else None
