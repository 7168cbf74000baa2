"""``blog-api send-webhook``: send a delivery signed exactly as GitHub signs it, and time the answer."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from function.webhooks.signature import sign

USER_AGENT = "GitHub-Hookshot/blog-api-cli"


def build_push(
    repo: str,
    ref: str,
    installation_id: int,
    after: str | None = None,
    *,
    default_branch: str = "main",
) -> dict[str, Any]:
    """A realistic App push payload (the fields GitHub sends that blog-api and humans look at).

    ``default_branch`` is the repository's, whatever ``ref`` was pushed: a push to another branch is
    what the server skips when ARTICLE_BRANCH is unset."""
    owner, _, name = repo.partition("/")
    branch = default_branch.removeprefix("refs/heads/")
    head = after or uuid.uuid4().hex + uuid.uuid4().hex[:8]
    return {
        "ref": ref if ref.startswith("refs/") else f"refs/heads/{ref}",
        "before": "0" * 40,
        "after": head,
        "created": False,
        "deleted": False,
        "forced": False,
        "base_ref": None,
        "compare": f"https://github.com/{repo}/compare/{head[:12]}",
        "commits": [],
        "head_commit": {
            "id": head,
            "message": "blog-api send-webhook test push",
            "added": [],
            "modified": [],
        },
        "repository": {
            "name": name,
            "full_name": repo,
            "owner": {"login": owner, "name": owner},
            "default_branch": branch,
            "master_branch": branch,
            "private": True,
        },
        "pusher": {"name": owner},
        "sender": {"login": owner, "type": "User"},
        "installation": {"id": installation_id},
    }


@dataclass(frozen=True)
class Sent:
    status: int
    body: str
    latency_ms: float
    delivery: str


def send(
    url: str,
    secret: str,
    body: bytes,
    *,
    event: str = "push",
    delivery: str | None = None,
    content_type: str = "application/json",
    timeout: float = 15.0,
    app_id: str | None = None,
    post: Callable[..., Any] | None = None,
) -> Sent:
    """POST ``body`` to ``url`` with GitHub's headers, the signatures computed over these exact bytes.

    A GitHub App's delivery names the App as its hook's target (``app_id``, "0" when unknown) and still
    carries the legacy SHA-1 signature next to the SHA-256 one."""
    import urllib3

    delivery = delivery or str(uuid.uuid4())
    # GitHub still sends the SHA-1 signature for receivers that predate SHA-256.
    legacy = hmac.new(secret.encode(), body, hashlib.sha1).hexdigest()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-GitHub-Hook-ID": "0",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": app_id or "0",
        "X-Hub-Signature": f"sha1={legacy}",
        "X-Hub-Signature-256": sign(secret, body),
        "User-Agent": USER_AGENT,
        "Content-Type": content_type,
        "Accept": "*/*",
    }
    pool = urllib3.PoolManager(timeout=urllib3.Timeout(connect=5, read=timeout), retries=False)
    started = time.perf_counter()
    try:
        answer = (post or pool.request)("POST", url, body=body, headers=headers)
    finally:
        pool.clear()
    latency = (time.perf_counter() - started) * 1000
    return Sent(answer.status, answer.data.decode("utf-8", "replace"), latency, delivery)


def encode(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()
