"""JSON over HTTP for the HTTP adapters: one POST on the project's HTTP client (bounded time-outs,
retries on connection errors, time-outs and 429/5xx, https only but to this machine), every failure as
EmbeddingFailed. Nothing here logs: the client logs method, host, path and status, never headers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from function.errors import EmbeddingFailed, HttpError
from function.github.http import HttpClient

# An answer larger than this is not an embedding: 8 MB holds a batch of 64 vectors of 3,072 dimensions
# written as JSON numbers.
MAX_ANSWER_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class HttpClients:
    """The clients of one adapter: ``documents`` for the sync's calls (patient: a sync has minutes),
    ``queries`` for a reader's query (quick to give up: the reader waits)."""

    documents: HttpClient
    queries: HttpClient

    @classmethod
    def default(cls, https_proxy: str | None = None, no_proxy: tuple[str, ...] = ()) -> HttpClients:
        """Documents: 3 tries of at most 3 s to connect and 20 s to answer. Queries: 2 tries of 2 s and
        5 s, so a reader has an answer (or a 502) within about 15 s, under API Gateway's 29 s."""
        return cls(
            HttpClient(
                connect_timeout=3.0, read_timeout=20.0, attempts=3, https_proxy=https_proxy, no_proxy=no_proxy
            ),
            HttpClient(
                connect_timeout=2.0, read_timeout=5.0, attempts=2, https_proxy=https_proxy, no_proxy=no_proxy
            ),
        )


def where(url: str) -> str:
    """``url`` as error messages name it: host and path, never a query string or credentials."""
    parts = urlsplit(url)
    return f"{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}{parts.path}"


def post_json(
    http: HttpClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    provider: str,
    api_key: str | None = None,
) -> Any:
    """POST ``payload`` as JSON to ``url`` (with ``Authorization: Bearer`` when ``api_key`` is given); the
    answer's JSON. Raises EmbeddingFailed when there is no answer, a status other than 2xx, or no JSON."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    body = json.dumps(payload, ensure_ascii=False).encode()
    try:
        answer = http.request("POST", url, headers=headers, body=body, max_bytes=MAX_ANSWER_BYTES)
    except HttpError as exc:
        # Down, refusing, or slower than the read time-out on every try; the message names the method,
        # host, path and the kind of failure only.
        raise EmbeddingFailed(f"{provider} gave no answer: {exc}") from None
    if not 200 <= answer.status < 300:
        raise EmbeddingFailed(f"{provider} answered HTTP {answer.status} ({where(url)})")
    try:
        return answer.json()
    except ValueError:
        raise EmbeddingFailed(f"{provider} answered something other than JSON ({where(url)})") from None
