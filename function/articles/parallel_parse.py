"""Parsing and rendering many article files on every CPU: the first sync's work, in worker processes.

A first sync renders every article, and rendering (markdown-it, Pygments) is pure Python: one CPU at a
time per process. ``ArticleParser`` spreads it over ``ForkPool`` processes (fork and pipes only, so it
works inside Lambda, which has no ``/dev/shm``), as many as the CPUs the environment gives, and gives
each file's outcome in the order the files came: exactly what ``parse_article`` gives in this process,
so the articles written are the same bytes either way. A few files are parsed here (forking costs more
than it saves), and so is everything on one CPU or with ``RENDER_PROCESSES=1``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import tzinfo

from function.articles.fork_pool import ForkPool, available_cpus
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


Outcome = ParsedArticle | ArticleParseError


def parse_one(options: ParseOptions, file: FileToParse) -> Outcome:
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
        )
    except ArticleParseError as exc:
        return exc


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
        self._pool: ForkPool[FileToParse, Outcome] = ForkPool(
            functools.partial(parse_one, options), processes
        )

    @property
    def processes(self) -> int:
        return self._pool.processes

    def __enter__(self) -> ArticleParser:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self._pool.close(kill=exc is not None)

    def parse(self, files: Iterable[FileToParse], *, expected: int | None = None) -> Iterator[Outcome]:
        """Each file's outcome, in order. ``expected``: how many files ``files`` yields, when it is a
        stream (fewer than ``MIN_FILES_FOR_PROCESSES`` are parsed in this process)."""
        count = expected if expected is not None else _length(files)
        if count is not None and count < MIN_FILES_FOR_PROCESSES:
            return (parse_one(self._options, f) for f in files)
        return self._pool.map(files)


def _length(files: Iterable[FileToParse]) -> int | None:
    return len(files) if isinstance(files, Sequence) else None
