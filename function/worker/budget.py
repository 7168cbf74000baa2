"""How the worker spends a delivery's time and memory: changed files are read and committed in chunks.

A chunk's files stream from the source to the render processes and are committed in bounded
transactions as they are rendered (``function.worker.sync.pipeline``), so what is held is bounded by a
transaction, not by the chunk; the chunk is the unit the time budget judges (no chunk starts that cannot
be read and committed before the deadline), and a sync cut short (by its time budget, or by Lambda
killing it) keeps every transaction it committed: the retry finds those articles in sync and reads only
the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from function.sources.port import RepoFile
from function.store.batching import TRANSACTION_MAX_ARTICLES
from function.store.bounds import groups

# Changed files per chunk: one transaction's worth of articles, and at most this many bytes of Markdown by
# the listing's sizes. Each chunk downloads the tarball again and unpacks it up to its own files, so fewer,
# larger chunks cost less; memory does not grow with them (files stream through one by one, and the
# writes go in transactions of 8 MiB). 32 MiB is about 1,000 real-sized articles; it stays under what one
# tarball download keeps (MAX_TARBALL_BYTES). A file the listing gives no size for counts by number.
READ_CHUNK_FILES = TRANSACTION_MAX_ARTICLES
READ_CHUNK_BYTES = 32 * 1024 * 1024

# Left before the invocation's end when no new chunk may start: committing a chunk (a few round trips
# of up to 4 MB each), recording the delivery and releasing the lock take a few seconds through the
# Tailnet relay; the rest is room for a slow database. A chunk starts only if this plus the slowest
# chunk so far still fits.
COMMIT_MARGIN_S = 15.0


def read_chunks(
    files: Sequence[RepoFile],
    max_files: int = READ_CHUNK_FILES,
    max_bytes: int = READ_CHUNK_BYTES,
) -> Iterator[list[RepoFile]]:
    """Consecutive groups of ``files`` with at most ``max_files`` files and ``max_bytes`` listed bytes;
    a file bigger than ``max_bytes`` is a group of its own (``function.store.bounds.groups``, the one
    helper that cuts work into bounded groups)."""
    return groups(files, max_items=max_files, weights=[(_listed_bytes, max_bytes)])


def _listed_bytes(file: RepoFile) -> int:
    return file.size or 0  # a file the listing gives no size for counts by number only
