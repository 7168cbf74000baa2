"""Reading changed files: one chunk fetched from the source and parsed, and the tally of what was read.

A chunk's articles come one by one, in the listing's order, as they are rendered: the writes take them
as they come (``function.worker.sync.pipeline``) and nothing holds a chunk's articles all at once. The
chunk's tally keeps no content, only what the summary and the remembered failures need.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import tzinfo

from function.articles.images import ImageResolver
from function.articles.parallel_parse import ArticleParser, FileToParse, ParseOptions, process_count
from function.articles.parsed import ParsedArticle
from function.assets.syncing import ArticleImages
from function.aws.deadline import Deadline
from function.sources.port import ArticleSource, FetchFailure, FetchResult, RepoFile, RepoRef, StreamsFetches
from function.worker.sync.plan import ReadPlan
from function.worker.sync.summary import FILE_WARNING, FileFailure, FileWarning, log_failures

log = logging.getLogger(__name__)


@dataclass
class Chunk:
    """What one chunk of changed files gave besides its articles (those go to the writes as they come)."""

    fetched: int
    read_s: float = 0.0  # how long fetching and parsing it took (on the deadline's clock)
    publish: dict[str, bool] = field(default_factory=dict)  # slug -> publish, of the articles parsed
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    parse_failures: list[tuple[str, RepoFile, str]] = field(default_factory=list)  # (slug, file, reason)

    @property
    def parsed(self) -> int:
        return len(self.publish)


@dataclass
class ReadTally:
    """What the committed chunks leave for the summary: no article contents, only their outcome."""

    plan: ReadPlan
    fetched: int = 0
    publish: dict[str, bool] = field(default_factory=dict)  # slug -> publish, of the articles written
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    parse_failures: list[tuple[str, RepoFile, str]] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.failures = list(self.plan.failures)

    def add(self, chunk: Chunk) -> None:
        self.fetched += chunk.fetched
        self.publish.update(chunk.publish)
        self.failures += chunk.failures
        self.warnings += chunk.warnings
        self.parse_failures += chunk.parse_failures


class ChunkReader:
    """Fetches a chunk of files from the article source and parses them with the blog's options, in
    worker processes when the chunk is large enough (``function.articles.parallel_parse``)."""

    def __init__(
        self,
        source: ArticleSource,
        *,
        articles_dir: str,
        allow_raw_html: bool,
        timezone: tzinfo | None,
        asset_base_url: str | None,
        render_processes: int | None = None,
    ) -> None:
        self._source = source
        self._options = ParseOptions(
            articles_dir=articles_dir,
            allow_raw_html=allow_raw_html,
            timezone=timezone,
            asset_base_url=asset_base_url,
        )
        self._processes = process_count(render_processes)

    def parser(self) -> ArticleParser:
        """The render processes of one sync (started at its first chunk worth them, ended when the
        ``with`` block the caller holds them in ends): every chunk of the sync is rendered by them."""
        return ArticleParser(self._options, self._processes)

    def articles(
        self,
        repo: RepoRef,
        plan: ReadPlan,
        files: Sequence[RepoFile],
        deadline: Deadline,
        parser: ArticleParser,
        chunk: Chunk,
    ) -> Iterator[ParsedArticle]:
        """Fetch one chunk of changed files and yield its articles in order as they are rendered; its
        failures, warnings and time go in ``chunk`` (complete once the iterator is exhausted).

        With images stored (``plan.assets``), each article's sources resolve against this sync's pass,
        in this process, whichever process renders the article."""
        began = deadline.remaining()
        by_sha_path = {(f.path, f.sha): f for f in files}
        assets = plan.assets
        images: dict[str, ArticleImages] = {}
        # What the fetch gave, in its order: a failure, or the key of the next file handed to the parser
        # (the parser takes a file before it answers for it, so a file's key is here by its outcome).
        given: deque[FetchFailure | tuple[str, str]] = deque()

        def to_parse() -> Iterator[FileToParse]:
            # As the source gives the files (a tarball, member by member): the render processes start
            # on the first while the rest downloads. Each content is let go once handed out.
            for result in _fetched(self._source, repo, plan, files):
                if isinstance(result, FetchFailure):
                    given.append(result)
                    continue
                given.append((result.path, result.sha))
                if assets is not None:
                    images[result.path] = assets.images_for(result.path)
                yield FileToParse(result.path, result.sha, result.content, assets is not None)

        def resolver_for(file: FileToParse) -> ImageResolver:
            return images[file.path].resolve

        def record(failure: FetchFailure) -> None:
            chunk.failures.append(FileFailure(failure.path, failure.message, failure.retryable))

        article_warnings: list[FileWarning] = []
        for outcome in parser.parse(to_parse(), expected=len(files), resolver_for=resolver_for):
            entry = given.popleft()
            while isinstance(entry, FetchFailure):  # the failures given before this file, in their place
                record(entry)
                entry = given.popleft()
            path, sha = entry
            if not isinstance(outcome, ParsedArticle):
                chunk.failures.append(FileFailure(path, str(outcome), retryable=False))
                repo_file = by_sha_path.get((path, sha)) or RepoFile(path, sha)
                chunk.parse_failures.append((plan.slug_by_path[path], repo_file, str(outcome)))
                continue
            if assets is not None:
                assets.record(outcome.slug, images[path])
                chunk.warnings += [FileWarning(path, message) for message in images[path].warnings]
            images.pop(path, None)
            chunk.publish[outcome.slug] = outcome.publish
            article_warnings += [FileWarning(path, message) for message in outcome.warnings]
            added = plan.snapshot.added_at.get(path)
            yield outcome if added is None else replace(outcome, added_at=added)
        for entry in given:
            if not isinstance(entry, FetchFailure):
                raise RuntimeError("a file handed to the parser gave no outcome")
            record(entry)
        chunk.warnings += article_warnings
        log_failures(chunk.failures)
        for warning in chunk.warnings:
            log.warning(FILE_WARNING, extra={"path": warning.path, "warning": warning.message})
        if deadline.limited:
            chunk.read_s = began - deadline.remaining()


def _fetched(
    source: ArticleSource, repo: RepoRef, plan: ReadPlan, files: Sequence[RepoFile]
) -> Iterator[FetchResult]:
    """The chunk's files as the source gives them: one by one from a source that streams (the GitHub
    tarball), else its whole answer, each let go of here once passed on."""
    if isinstance(source, StreamsFetches):
        yield from source.fetch_stream(repo, plan.snapshot, files, wanted_in_all=len(plan.changed))
        return
    results = deque(source.fetch(repo, plan.snapshot, files, wanted_in_all=len(plan.changed)))
    while results:
        yield results.popleft()
