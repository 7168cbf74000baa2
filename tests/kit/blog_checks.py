"""Helpers for the fault-injection suite: what a user would look at after a fault (the served articles,
the stored rows, the delivery record), and faults the GitHub stand-in does not have built in."""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass
from typing import Any

from function.sources.gitsha import git_blob_sha
from function.store.records import DeliveryRecord, StoredArticle
from tests.kit.blog_fixtures import USER, Blog
from tests.kit.deliveries import delivery_uuid
from tests.kit.github_fixtures import REPO
from tests.kit.github_standin import GitHubStandIn, StandInRequest, StandInResponse

BLOBS = f"/repos/{REPO}/git/blobs/"
TREES = re.compile(rf"/repos/{re.escape(REPO)}/git/trees/.+")


def blob_path(content: bytes) -> str:
    """The stand-in path of the blob holding ``content`` (what a fault is aimed at)."""
    return BLOBS + git_blob_sha(content)


def requests_for(github: GitHubStandIn, path: str) -> list[StandInRequest]:
    return [r for r in github.requests if r.path == path]


def stored(blog: Blog) -> dict[str, StoredArticle]:
    """Every stored article of the user by slug (archived included), read on a fresh connection."""
    with blog.store() as store:
        user = store.users.get_user(USER)
        assert user is not None
        return store.reconcile.load_index(user.id)


def synced_head(blog: Blog) -> str | None:
    """The branch head of the newest delivery that reconciled the articles (success or partial)."""
    with blog.store() as store:
        done = [
            (d.finished_at.isoformat(), d.head_sha)
            for d in store.deliveries.recent_deliveries(1000)
            if d.outcome in ("success", "partial") and d.finished_at is not None
        ]
    return max(done)[1] if done else None


def delivery(blog: Blog, delivery_id: str) -> DeliveryRecord:
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid(delivery_id))
    assert record is not None, f"delivery {delivery_id} was never recorded"
    return record


def served(blog: Blog) -> dict[str, dict[str, Any]]:
    """What the blog's front end gets: published articles by slug."""
    return {a["slug"]: a for a in blog.articles()}


def table_rows(blog: Blog, table: str) -> int:
    with blog.store() as store:
        row = store.db.execute_sql(f"SELECT COUNT(*) FROM {table}").fetchone()  # noqa: S608 - fixed names
    return int(row[0])


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Gate:
    """A blob served only once the test opens the gate: makes one delivery slow at a chosen point."""

    opened: threading.Event
    reached: threading.Event  # set when a request for the blob arrived

    def open(self) -> None:
        self.opened.set()


def gate_blob(github: GitHubStandIn, content: bytes, *, timeout: float = 20.0) -> Gate:
    """Hold requests for the blob of ``content`` until ``Gate.open()`` (a route added through the stand-in's
    public ``add_route``; the token is still checked by the stand-in)."""
    gate = Gate(threading.Event(), threading.Event())
    sha = git_blob_sha(content)

    def handler(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        gate.reached.set()
        gate.opened.wait(timeout)
        return StandInResponse(200, content, {"Content-Type": "application/vnd.github.raw"})

    github.add_route("GET", re.escape(BLOBS + sha), handler, kind="blob", auth="token")
    return gate
