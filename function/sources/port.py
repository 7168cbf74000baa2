"""The article source port: where the worker reads the repository from.

Two adapters implement it and behave the same: the GitHub App (``function.sources.github``)
and a local folder read as if it were the repository (``function.sources.folder``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class RepoRef:
    """Which repository and branch to read, and with which App installation."""

    full_name: str  # "owner/name"; ignored by the dir source
    branch: str | None  # None: the repository's default branch
    installation_id: int | None = None
    # The head SHA the push reported. A source may read that commit's listing while it reads the
    # branch head, and use it when the two agree (the usual case): one round trip instead of two.
    pushed_head: str | None = None


@dataclass(frozen=True)
class RepoFile:
    """One article file in the tree listing: its repository path and git blob SHA."""

    path: str  # e.g. "articles/hello.md"
    sha: str  # git blob SHA-1 (hex), as `git hash-object` computes it
    size: int | None = None  # bytes, as the tree listing says (None when the source does not say)


@dataclass(frozen=True)
class Snapshot:
    """The article files at one commit.

    ``complete`` is False when the listing could not be read whole (GitHub's truncated tree):
    the worker then never archives, because a missing path may only be missing from the listing.
    """

    head_sha: str
    files: tuple[RepoFile, ...]
    complete: bool = True
    # Every other regular file of the tree (not the articles): where the images readers see come from
    # (``function.assets``). Fetched with ``fetch`` like the articles.
    others: tuple[RepoFile, ...] = ()
    # Zenn books' files (``books/<slug>/config.yaml``, chapters, cover): see function.articles.book_paths.
    book_files: tuple[RepoFile, ...] = ()
    # Article path -> naive UTC time its file was added, from the repository's history when the source
    # can read it (a folder in a git work tree: ``function.sources.git_history``); empty otherwise.
    # An article with no date of its own is dated by it when first published.
    added_at: Mapping[str, datetime] = field(default_factory=dict)


@dataclass(frozen=True)
class FetchedFile:
    path: str
    sha: str
    content: bytes


@dataclass(frozen=True)
class FetchFailure:
    path: str
    sha: str
    message: str
    retryable: bool  # True for 5xx / 429 / time-outs: the delivery should be retried later


FetchResult = FetchedFile | FetchFailure


class ArticleSource(Protocol):
    def snapshot(self, repo: RepoRef) -> Snapshot:
        """List the article files (``<articles_dir>/*.md``, direct children only) at the branch head,
        read at call time. Raises SourceUnavailable when the head or listing cannot be read."""
        ...

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        """Fetch the content of ``files`` (a subset of ``snapshot.files``). One result per file, in any
        order; a file that cannot be fetched yields a FetchFailure and never raises.
        ``wanted_in_all``: how many files the sync fetches over all its chunks (``files`` is one), for a
        source that chooses between per-file requests and one download of the whole repository."""
        ...


@runtime_checkable
class StreamsFetches(Protocol):
    """A source that gives a fetch's files one by one as they arrive (a tarball, member by member), so
    a first sync's render processes start on the first files while the rest downloads."""

    def fetch_stream(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> Iterator[FetchResult]:
        """``fetch``'s results (one per file, in any order), each given as soon as it is known."""
        ...
