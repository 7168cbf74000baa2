"""The sync of one user's articles from their repository into the database, as a small package.

``Worker`` (``worker``) orders the steps; each step is a module: the plan of what changed (``plan``),
reading a chunk (``reading``), the loop under the deadline (``chunked``), the writes (``writing``), the
skipped pushes (``replay``), the delivery record (``records``) and the summary (``summary``). The names
other code uses are re-exported here.
"""

from function.worker.sync.replay import OTHER_REPOSITORY, follows, same_name
from function.worker.sync.summary import FileFailure, FileWarning, SyncSummary
from function.worker.sync.worker import Worker, repo_of, utc_now

__all__ = [
    "OTHER_REPOSITORY",
    "FileFailure",
    "FileWarning",
    "SyncSummary",
    "Worker",
    "follows",
    "repo_of",
    "same_name",
    "utc_now",
]
