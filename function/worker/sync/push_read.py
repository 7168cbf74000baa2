"""A push's repository read, begun while its opening database turn runs.

The branch head decides what a push syncs, and it is read once the user's lock is held, as before: two
deliveries that run at once can never roll content back. What is read before the lock is only what is
addressed by content and never changes: the tree listing of the pushed commit (``after``), requested with
the opening turn, and, once that listing and the database's index are both known, the few blobs that
changed, fetched while the head is read. When the head is the pushed commit (the usual case) they are
used; when a newer push moved the branch they are dropped and the head's own listing is read. Nothing is
written from a read ahead before the head confirms it, so a delivery that is skipped stores nothing of it.

A listing is read ahead only for a repository this process has seen followed by the installation's blog,
and never for a head it synced or is reading already: a replayed push, or a push from another repository,
still makes no GitHub request (see ``PushHints``). Every thread started here is waited for on the way out.
"""

from __future__ import annotations

import re
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from function.sources.fetch_ahead import FetchesAhead
from function.sources.port import ArticleSource, ListsCommits, RepoRef, Snapshot
from function.worker.sync.plan import Known, Planner, ReadPlan

# At most this many changed files are fetched ahead (beyond, the fetch may go by tarball: a first sync).
FETCH_AHEAD_MAX_FILES = 16
# Repositories remembered per source (the oldest are forgotten first).
HINTS_MAX_REPOSITORIES = 1024
# Matched whole (fullmatch): "$" would also match before a trailing newline.
_SHA_RE = re.compile(r"[0-9a-f]{40}")
_NOT_SYNCED = ""


class PushHints:
    """What this process learnt from the pushes it opened: which repositories (by installation) the blog
    follows, and the head last synced or being read for each. Only a hint for reading ahead: a wrong one
    costs a request or saves none, never changes what is synced. Thread-safe."""

    def __init__(self, max_repositories: int = HINTS_MAX_REPOSITORIES) -> None:
        self._lock = threading.Lock()
        self._heads: dict[tuple[int | None, str], str] = {}
        self._max = max_repositories

    def claim(self, repo: RepoRef) -> bool:
        """Whether to read ``repo``'s pushed commit ahead (and, if so, it is now being read): a followed
        repository whose pushed head is not the one last synced or being read here."""
        pushed = (repo.pushed_head or "").lower()
        key = _key(repo)
        with self._lock:
            if self._heads.get(key, pushed) == pushed:
                return False
            self._heads[key] = pushed
            return True

    def saw(self, repo: RepoRef, *, followed: bool, head: str | None) -> None:
        """What a push's opening turn (or its finish) said: whether ``repo`` is followed, and the head
        synced or being synced (None: not known, the hint is kept)."""
        key = _key(repo)
        with self._lock:
            if not followed:
                self._heads.pop(key, None)
                return
            if head is not None or key not in self._heads:
                self._heads.pop(key, None)
                self._heads[key] = (head or _NOT_SYNCED).lower()
            while len(self._heads) > self._max:
                del self._heads[next(iter(self._heads))]


def _key(repo: RepoRef) -> tuple[int | None, str]:
    return (repo.installation_id, repo.full_name.casefold())


_hints_by_source: weakref.WeakKeyDictionary[object, PushHints] = weakref.WeakKeyDictionary()
_hints_lock = threading.Lock()


def hints_for(source: object) -> PushHints:
    """The hints of everything this process synced from ``source`` (one source per process on Lambda)."""
    with _hints_lock:
        try:
            hints = _hints_by_source.get(source)
            if hints is None:
                hints = _hints_by_source[source] = PushHints()
            return hints
        except TypeError:  # a source that cannot be weakly referenced: no memory
            return PushHints()


class PushRead:
    """One push's read (a context manager): the pushed listing begun on entry, the plan after the lock."""

    def __init__(
        self, source: ArticleSource, fetches: FetchesAhead, planner: Planner, repo: RepoRef, hints: PushHints
    ) -> None:
        self._source = source
        self._fetches = fetches
        self._planner = planner
        self._repo = repo
        self._hints = hints
        self._pool: ThreadPoolExecutor | None = None
        self._listing: Future[Snapshot] | None = None
        # Whether the changed blobs may be fetched before the head confirms the pushed commit.
        self.fetch_ahead = True

    @property
    def reading_ahead(self) -> bool:
        return self._listing is not None

    def __enter__(self) -> PushRead:
        repo, source = self._repo, self._source
        pushed = (repo.pushed_head or "").lower()
        if (
            isinstance(source, ListsCommits)
            and repo.branch is not None
            and _SHA_RE.fullmatch(pushed)
            and self._hints.claim(repo)
        ):
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="push-read")
            self._listing = self._pool.submit(source.listing, repo, pushed)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._fetches.drop()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def plan(self, known: Known) -> ReadPlan:
        """The sync's plan at the branch head, read now (under the lock). Raises the source's errors."""
        source, repo = self._source, self._repo
        if self._listing is None or self._pool is None:
            return self._planner.plan(source.snapshot(repo), known)
        assert isinstance(source, ListsCommits) and repo.branch is not None  # as on entry
        head = self._pool.submit(source.head_sha, repo, repo.branch)
        pushed = (repo.pushed_head or "").lower()
        try:
            listed: Snapshot | None = self._listing.result()
        except Exception:  # noqa: BLE001 - raised below if the head is the pushed commit
            listed = None
        plan = self._planner.plan(listed, known) if listed is not None else None
        if (
            self.fetch_ahead
            and plan is not None
            and plan.chunks
            and len(plan.changed) <= FETCH_AHEAD_MAX_FILES
        ):
            # As ChunkReader will ask for the first chunk: the same call answers from this one.
            self._fetches.begin(
                self._pool, repo, plan.snapshot, plan.chunks[0], wanted_in_all=len(plan.changed)
            )
        now = head.result()
        if now == pushed:
            if plan is None:
                self._listing.result()  # the listing's own error
                raise AssertionError("unreachable")
            return plan
        self._fetches.drop()  # a newer push moved the branch: its listing, not the pushed one
        return self._planner.plan(source.listing(repo, now), known)
