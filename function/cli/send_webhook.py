"""``blog-api send-webhook``: send a delivery signed exactly as GitHub signs it, and time the answer."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import click

from function.cli.failures import transport_reason
from function.errors import ConfigError
from function.settings import Settings, ssm_parameter_reader
from function.webhooks.signature import sign
from shared.runtime_settings import declaration, variable

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


@click.command("send-webhook")
@click.argument("url")
@click.option("--secret", envvar="GITHUB_WEBHOOK_SECRET", help="webhook secret (default: env)")
@click.option("--secret-param", default=None, help="read the secret from this SSM SecureString instead")
@click.option("--event", default="push", show_default=True)
@click.option("--payload", "payload_file", type=click.File("rb"), default=None, help="body to send (a file)")
@click.option("--delivery", default=None, help="X-GitHub-Delivery (default: a new UUID)")
@click.option("--repo", default="demo/blog", show_default=True, help="without --payload: repository")
@click.option("--ref", default="refs/heads/main", show_default=True, help="without --payload: ref pushed")
@click.option(
    "--default-branch",
    default="main",
    show_default=True,
    help="without --payload: the repository's default branch (the one synced when ARTICLE_BRANCH is unset)",
)
@click.option("--installation-id", type=int, default=1, show_default=True, help="without --payload")
@click.option("--form", is_flag=True, help="send as application/x-www-form-urlencoded (payload=...)")
def send_webhook(
    url: str,
    secret: str | None,
    secret_param: str | None,
    event: str,
    payload_file: IO[bytes] | None,
    delivery: str | None,
    repo: str,
    ref: str,
    default_branch: str,
    installation_id: int,
    form: bool,
) -> None:
    """Send a delivery signed as GitHub signs it; print status, body and latency."""
    from urllib.parse import urlencode

    if not secret_param and not secret:
        # As the app reads its settings: the parameter only when the plain variable is unset.
        param = declaration("webhook_secret").param
        secret_param = (param and os.environ.get(param.env)) or None
    if secret_param:
        # The same proxy settings the app reads, NO_PROXY included.
        env = Settings.from_env(require_secret=False)
        values = ssm_parameter_reader(env.https_proxy, env.no_proxy)([secret_param])
        if secret_param not in values:
            raise ConfigError(f"SSM parameter {secret_param} was not found")
        secret = values[secret_param]
    if not secret:
        raise ConfigError(
            "no secret: pass --secret or --secret-param, or set GITHUB_WEBHOOK_SECRET "
            "(or GITHUB_WEBHOOK_SECRET_PARAM)"
        )
    if payload_file is not None:
        body = payload_file.read()
    elif event == "ping":
        body = encode({"zen": "Keep it logically awesome.", "hook_id": 0})
    else:
        body = encode(build_push(repo, ref, installation_id, default_branch=default_branch))
    content_type = "application/json"
    if form:
        body = urlencode({"payload": body.decode("utf-8")}).encode()
        content_type = "application/x-www-form-urlencoded"
    try:
        sent = send(
            url,
            secret,
            body,
            event=event,
            delivery=delivery,
            content_type=content_type,
            app_id=os.environ.get(variable("github_app_id")),
        )
    except Exception as exc:  # any transport failure is reported as one line
        raise ConfigError(
            f"could not send to {url} ({transport_reason(exc)}): is the server running, and is the URL right?"
        ) from exc
    click.echo(f"status: {sent.status}")
    click.echo(f"body: {sent.body.strip()}")
    click.echo(f"latency_ms: {sent.latency_ms:.1f}")
    click.echo(f"delivery: {sent.delivery}")
    if sent.status >= 400:
        sys.exit(1)
