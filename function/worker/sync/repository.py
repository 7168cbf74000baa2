"""One sync of a user's repository once their lock is held, the same for a push and for ``blog-api sync``:
the listing diffed with what is stored (``plan``), the changed articles read and committed chunk by chunk
under the deadline (``chunked``), then the Zenn books of the same listing (``books``)."""

from __future__ import annotations

from function.assets.syncing import AssetSync
from function.aws.deadline import Deadline
from function.sources.port import RepoRef, Snapshot
from function.worker.sync.books import BookSync
from function.worker.sync.chunked import ChunkedSync, Progress
from function.worker.sync.mass_removal import Valve
from function.worker.sync.plan import Known, Planner, ReadPlan
from function.worker.sync.ports import Articles
from function.worker.sync.summary import SyncSummary

# What a delivery's "files left" names when the time budget left no room for the books.
BOOKS_LEFT = "books/"


class RepositorySync:
    """Plans, reads and writes one sync's articles, then its books."""

    def __init__(
        self,
        planner: Planner,
        chunked: ChunkedSync,
        books: BookSync,
        articles: Articles,
        assets: AssetSync | None,
    ) -> None:
        self._planner = planner
        self._chunked = chunked
        self._books = books
        self._articles = articles
        self._assets = assets

    def known(self, user_id: int) -> Known:
        """What is stored of the user's articles (and images), read now."""
        assets = self._assets.start(user_id) if self._assets is not None else None
        return Known(self._articles.load_index(user_id), self._articles.load_failures(user_id), assets)

    def run(
        self,
        user_id: int,
        repo: RepoRef,
        snapshot: Snapshot,
        known: Known,
        deadline: Deadline,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        valve: Valve | None = None,
    ) -> SyncSummary:
        """Sync the articles and books of ``snapshot``; ``rebuild``: read and render every file again.
        With ``valve``, a sync that would take most of the blog out of service is held: nothing is read
        or written, and the summary says so (``held``)."""
        plan = self._planner.plan(snapshot, known, rebuild=rebuild)
        held = valve.check(plan, known.index) if valve is not None else None
        if held is not None:
            return SyncSummary(head_sha=snapshot.head_sha, held=held)
        summary = self._chunked.run(user_id, repo, plan, known, deadline, progress=progress)
        self._sync_books(user_id, repo, plan, summary, deadline, rebuild=rebuild)
        return summary

    def _sync_books(
        self,
        user_id: int,
        repo: RepoRef,
        plan: ReadPlan,
        summary: SyncSummary,
        deadline: Deadline,
        *,
        rebuild: bool,
    ) -> None:
        """Sync the Zenn books of the same listing once the articles are committed; not when the time
        budget left article files for the next run (the books then wait for it too), nor when it leaves
        less than the commit margin: the books are then left, named ``books/``, and the retry syncs them."""
        if summary.left:
            return
        if plan.snapshot.book_files and not deadline.allows(self._chunked.commit_margin_s):
            summary.left.append(BOOKS_LEFT)
            return
        self._books.run(user_id, repo, plan.snapshot, rebuild=rebuild, assets=plan.assets).add_to(summary)
