"""Reading changed files: one chunk fetched from the source and parsed, and the tally of what was read.

A chunk's articles are held only until they are committed; the tally keeps no content, only what the
summary and the remembered failures need.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo

from function.articles.parallel_parse import ArticleParser, FileToParse, ParseOptions, process_count
from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle
from function.aws.deadline import Deadline
from function.errors import ArticleParseError
from function.sources.port import ArticleSource, FetchedFile, FetchFailure, FetchResult, RepoFile, RepoRef
from function.worker.sync.plan import ReadPlan
from function.worker.sync.summary import FILE_WARNING, FileFailure, FileWarning, log_failures

log = logging.getLogger(__name__)


@dataclass
class Chunk:
    """One chunk of changed files, fetched and parsed: held until it is committed."""

    fetched: int
    read_s: float = 0.0  # how long fetching and parsing it took (on the deadline's clock)
    parsed: list[ParsedArticle] = field(default_factory=list)
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    parse_failures: list[tuple[str, RepoFile, str]] = field(default_factory=list)  # (slug, file, reason)


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
        self.publish.update((a.slug, a.publish) for a in chunk.parsed)
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

    def read(self, repo: RepoRef, plan: ReadPlan, files: Sequence[RepoFile], deadline: Deadline) -> Chunk:
        """Fetch and parse one chunk of changed files, timed on the deadline's clock."""
        began = deadline.remaining()
        chunk = Chunk(fetched=len(files))
        by_sha_path = {(f.path, f.sha): f for f in files}
        results = self._source.fetch(repo, plan.snapshot, files, wanted_in_all=len(plan.changed))
        if plan.assets is not None:
            # The images resolve against this sync's pass (its listing, the store, GitHub), which lives in
            # this process: these articles are rendered here, one after another.
            self._read_with_images(plan, results, by_sha_path, chunk)
        else:
            fetched = [r for r in results if isinstance(r, FetchedFile)]
            with ArticleParser(self._options, self._processes) as parser:
                outcomes = iter(parser.parse([FileToParse(r.path, r.sha, r.content) for r in fetched]))
                for result in results:
                    if isinstance(result, FetchFailure):
                        chunk.failures.append(FileFailure(result.path, result.message, result.retryable))
                        continue
                    outcome = next(outcomes)
                    if isinstance(outcome, ParsedArticle):
                        chunk.parsed.append(outcome)
                        continue
                    chunk.failures.append(FileFailure(result.path, str(outcome), retryable=False))
                    file = by_sha_path.get((result.path, result.sha)) or RepoFile(result.path, result.sha)
                    chunk.parse_failures.append((plan.slug_by_path[result.path], file, str(outcome)))
            chunk.warnings = [FileWarning(a.path, message) for a in chunk.parsed for message in a.warnings]
        log_failures(chunk.failures)
        for warning in chunk.warnings:
            log.warning(FILE_WARNING, extra={"path": warning.path, "warning": warning.message})
        if deadline.limited:
            chunk.read_s = began - deadline.remaining()
        return chunk

    def _read_with_images(
        self,
        plan: ReadPlan,
        results: Sequence[FetchResult],
        by_sha_path: dict[tuple[str, str], RepoFile],
        chunk: Chunk,
    ) -> None:
        assert plan.assets is not None
        options = self._options
        for result in results:
            if isinstance(result, FetchFailure):
                chunk.failures.append(FileFailure(result.path, result.message, result.retryable))
                continue
            images = plan.assets.images_for(result.path)
            try:
                article = parse_article(
                    result.path,
                    result.sha,
                    result.content,
                    articles_dir=options.articles_dir,
                    allow_raw_html=options.allow_raw_html,
                    timezone=options.timezone,
                    asset_base_url=options.asset_base_url,
                    resolve_image=images.resolve,
                )
            except ArticleParseError as exc:
                chunk.failures.append(FileFailure(result.path, str(exc), retryable=False))
                file = by_sha_path.get((result.path, result.sha)) or RepoFile(result.path, result.sha)
                chunk.parse_failures.append((plan.slug_by_path[result.path], file, str(exc)))
                continue
            chunk.parsed.append(article)
            plan.assets.record(article.slug, images)
            chunk.warnings += [FileWarning(article.path, message) for message in images.warnings]
        chunk.warnings += [FileWarning(a.path, message) for a in chunk.parsed for message in a.warnings]
