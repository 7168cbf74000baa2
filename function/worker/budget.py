"""How the worker spends a delivery's time and memory: changed files are read and committed in chunks.

A chunk is fetched, parsed and committed before the next one is fetched, so only one chunk's contents
are held at once, and a sync cut short (by its time budget, or by Lambda killing it) keeps every chunk
it committed: the retry finds those articles in sync and reads only the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from function.sources.port import RepoFile
from function.store.batching import TRANSACTION_MAX_ARTICLES
from function.store.bounds import groups

# Changed files per chunk: one transaction's worth of articles, and at most this many bytes of Markdown by
# the listing's sizes (with the HTML and the parsed objects a few times that in memory, tens of MB at most;
# the chunk's writes are then split into transactions of 8 MiB). A first sync of 1,000 articles of 4.6 KB
# (the benchmark's) is one chunk, so one tarball. A file the listing gives no size for counts by number.
READ_CHUNK_FILES = TRANSACTION_MAX_ARTICLES
READ_CHUNK_BYTES = 8 * 1024 * 1024

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
