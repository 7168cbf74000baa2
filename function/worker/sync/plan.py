"""Planning a sync: the tree listing diffed against what the database knows, without reading a file.

The plan says which article files changed since the last run, which fail without being read (a name
that cannot be a slug, or a parse failure remembered at the same blob), and the chunks the changed
files are read in. It is computed once per sync, on no database access.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from function.articles.parse import is_article_path, parse_article, slug_for_path
from function.assets.syncing import AssetPass
from function.errors import ArticleParseError
from function.sources.port import RepoFile, Snapshot
from function.store.records import RememberedFailure, StoredArticle
from function.worker.budget import READ_CHUNK_BYTES, READ_CHUNK_FILES, read_chunks
from function.worker.sync.summary import FileFailure, log_failures


@dataclass(frozen=True)
class Known:
    """What the database knows before a read: the article index and the remembered parse failures."""

    index: Mapping[str, StoredArticle]
    failures: Mapping[str, RememberedFailure]
    # The images' pass (function.assets.syncing): None when images are not stored by blog-api.
    assets: AssetPass | None = None


@dataclass(frozen=True)
class ReadPlan:
    """A sync's plan: the listing, the article slugs in it, which files changed since the last run and
    the chunks they are read in (not to be confused with the store's plan of one transaction's writes)."""

    snapshot: Snapshot
    slugs: set[str]
    badly_named: int  # article files whose name cannot be a slug (among the failures)
    changed: list[RepoFile]
    chunks: list[list[RepoFile]]  # ``changed``, in the groups read and committed one at a time
    failures: list[FileFailure]  # found without reading: badly named, or remembered as broken
    slug_by_path: dict[str, str]
    started: float  # time.monotonic() when the sync began, for the log's duration
    assets: AssetPass | None = None  # the images' pass, carried to the reader
    rebuild: bool = False  # every file read again: every article indexed for search again too


class Planner:
    """Diffs a listing against the index, and groups the changed files into read chunks."""

    def __init__(
        self,
        articles_dir: str,
        *,
        chunk_max_files: int = READ_CHUNK_FILES,
        chunk_max_bytes: int = READ_CHUNK_BYTES,
        render_fingerprint: str | None = None,
    ) -> None:
        self._articles_dir = articles_dir
        self._chunk_max_files = chunk_max_files
        self._chunk_max_bytes = chunk_max_bytes
        # What this code renders with (``function.articles.render_fingerprint``); None: not compared.
        self._render_fingerprint = render_fingerprint

    def plan(self, snapshot: Snapshot, known: Known, *, rebuild: bool = False) -> ReadPlan:
        """Which files changed (with ``rebuild``, every file), and which were rendered by another version
        of the renderer or with other settings (read and rendered again). A file that failed to parse at
        the same blob before is reported again but not fetched (with ``rebuild``, it is read again)."""
        started = time.monotonic()
        files_by_slug: dict[str, RepoFile] = {}
        failures: list[FileFailure] = []
        for file in snapshot.files:
            slug = slug_for_path(file.path, self._articles_dir)
            if slug is not None:
                files_by_slug[slug] = file
            elif is_article_path(file.path, self._articles_dir):
                # An article file whose name cannot be a slug fails alone, with the parser's reason.
                failures.append(FileFailure(file.path, _slug_error(file.path, self._articles_dir), False))
        badly_named = len(failures)
        changed = []
        for slug, file in files_by_slug.items():
            remembered = None if rebuild else known.failures.get(slug)
            if rebuild:
                changed.append(file)
            elif remembered is not None and remembered.blob_sha == file.sha and remembered.path == file.path:
                failures.append(FileFailure(file.path, remembered.message, False, remembered=True))
            elif (stored := known.index.get(slug)) is None or stored.blob_sha != file.sha or stored.archived:
                changed.append(file)
            elif self._render_fingerprint not in (None, stored.render_fingerprint):
                changed.append(file)
        if known.assets is not None and not rebuild:
            # Rendered with an image that changed since: rendered again, to point at its new key.
            stale = known.assets.stale_slugs(snapshot)
            unread = {f.path for f in changed} | {f.path for f in failures}
            changed += [f for slug, f in files_by_slug.items() if slug in stale and f.path not in unread]
        log_failures(failures)
        return ReadPlan(
            snapshot=snapshot,
            slugs=set(files_by_slug),
            badly_named=badly_named,
            changed=changed,
            chunks=list(read_chunks(changed, self._chunk_max_files, self._chunk_max_bytes)),
            failures=failures,
            slug_by_path={file.path: slug for slug, file in files_by_slug.items()},
            started=started,
            assets=known.assets,
            rebuild=rebuild,
        )


def _slug_error(path: str, articles_dir: str) -> str:
    try:
        parse_article(path, "", b"", articles_dir=articles_dir)
    except ArticleParseError as exc:
        return str(exc)
    return "file name is not a valid slug"
