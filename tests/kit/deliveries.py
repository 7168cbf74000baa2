"""Recorded GitHub payloads and AWS event shapes, and signing them as GitHub does."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

from function.webhooks.signature import sign

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SECRET = "It is a test secret, long enough: 7c1d0a"


def github_payload(name: str) -> bytes:
    """Bytes of a recorded payload, e.g. ``push/with-new-branch`` (octokit/webhooks, MIT)."""
    return (FIXTURES / "github" / f"{name}.payload.json").read_bytes()


def github_json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(github_payload(name))
    return data


def aws_event(name: str) -> dict[str, Any]:
    """A recorded Lambda event shape (Powertools' test events, MIT-0)."""
    data: dict[str, Any] = json.loads((FIXTURES / "aws" / f"{name}.json").read_text())
    return data


def push_payload(
    *,
    ref: str = "refs/heads/main",
    installation_id: int = 1,
    repo: str = "octo/blog",
    after: str = "a" * 40,
    repo_id: int | None = None,
) -> dict[str, Any]:
    """The recorded App push, re-aimed at a repository and branch of the test's choosing (and, with
    ``repo_id``, at another GitHub repository id than the recording's)."""
    data = github_json("push/with-new-branch")
    data["ref"] = ref
    data["after"] = after
    data["installation"] = {"id": installation_id}
    data["repository"]["full_name"] = repo
    if repo_id is not None:
        data["repository"]["id"] = repo_id
    data["repository"]["default_branch"] = "main"
    data["repository"]["master_branch"] = "main"
    return data


def delivery_uuid(label: str) -> str:
    """GitHub's shape (a UUID) for a test's delivery label: the label itself when it is one, else a UUID
    made from it, always the same, so a test names its deliveries "d-1" and finds them again."""
    try:
        uuid.UUID(label)
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"blog-api-test-delivery:{label}"))
    return label


def github_headers(
    body: bytes,
    *,
    event: str = "push",
    delivery: str = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    secret: str = SECRET,
    content_type: str = "application/json",
) -> dict[str, str]:
    """The headers GitHub sends with a delivery, signed over ``body``."""
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_uuid(delivery),
        "X-Hub-Signature-256": sign(secret, body),
        "User-Agent": "GitHub-Hookshot/044aadd",
        "Content-Type": content_type,
    }


def as_http_event(shape: str, method: str, path: str, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """A recorded event of ``shape`` re-aimed at our route with a signed GitHub delivery."""
    event = aws_event(shape)
    event["body"] = base64.b64encode(body).decode()
    event["isBase64Encoded"] = True
    event.pop("queryStringParameters", None)
    event.pop("multiValueQueryStringParameters", None)
    if "multiValueHeaders" in event:
        event["multiValueHeaders"] = {k: [v] for k, v in headers.items()}
        event.pop("headers", None)
    else:
        event["headers"] = {k.lower(): v for k, v in headers.items()}
    if event.get("version") == "2.0":
        event["rawPath"] = path
        event["rawQueryString"] = ""
        event["requestContext"]["http"]["method"] = method
        event["requestContext"]["http"]["path"] = path
        event.pop("cookies", None)
    else:
        event["path"] = path
        event["httpMethod"] = method
        if "requestContext" in event and "path" in event["requestContext"]:
            event["requestContext"]["path"] = path
            event["requestContext"]["httpMethod"] = method
    return event
