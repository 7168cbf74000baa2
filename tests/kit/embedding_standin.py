"""An embedding service on loopback, for semantic search's tests and the benchmark: the original
service's protocol (``POST /embed``, ``POST /chunks``), an OpenAI-compatible ``POST /v1/embeddings``
and Bedrock's ``POST /model/<id>/invoke`` (what botocore sends to an ``endpoint_url``), all with
deterministic vectors, and the faults a test asks for.

The vectors are hashed bags of words: each word (a run of Latin letters or digits, lower-cased) and each
other visible character (a kanji, a kana) adds to the dimensions its hash picks, so two texts that share
words point the same way and a query finds the article that holds its words, with no model. The same
text always gives the same vector.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = 64
_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def hashed_vector(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """``text``'s deterministic vector (see the module's docstring), of length 1."""
    vector = [0.0] * dimensions
    for token in _TOKEN.findall(text.lower()):
        digest = hashlib.sha256(token.encode()).digest()
        for place in range(2):
            slot = int.from_bytes(digest[place * 4 : place * 4 + 4], "big") % dimensions
            vector[slot] += 1.0 if digest[8 + place] % 2 else -1.0
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    if not any(vector):
        vector[0] = 1.0  # an empty text still has a direction
        norm = 1.0
    return [x / norm for x in vector]


def service_chunks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The stand-in's chunking: one chunk per blank-line paragraph of the content (the title first)."""
    paragraphs = [p.strip() for p in str(payload.get("content", "")).split("\n\n") if p.strip()]
    chunks = []
    for index, paragraph in enumerate(paragraphs or [""]):
        heading = paragraph.lstrip("#").strip() if paragraph.startswith("#") else ""
        text = f"{payload.get('title', '')}\n{paragraph}".strip()
        chunks.append(
            {
                "index": index,
                "heading": heading,
                "content": paragraph,
                "embedding_text": text,
                "token_count": len(_TOKEN.findall(text.lower())),
            }
        )
    return chunks


@dataclass
class Faults:
    """What the stand-in does wrong (all off: it answers well)."""

    status: int | None = None  # answer this HTTP status with an error body
    delay_s: float = 0.0  # wait before answering (longer than the client's read time-out: "slow")
    wrong_dimension: bool = False  # a vector shorter than declared / than before
    non_finite: bool = False  # NaN in the vector
    skip_index: bool = False  # /chunks numbers its chunks 0, 2, 3…
    version: str = "1"  # /chunks' chunking version


@dataclass(frozen=True)
class Call:
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]


@dataclass
class EmbeddingStandIn:
    """The running stand-in: ``url`` is its base, ``calls`` what it was sent, ``faults`` what it does."""

    url: str
    faults: Faults = field(default_factory=Faults)
    calls: list[Call] = field(default_factory=list)
    dimensions: int = DIMENSIONS

    def paths(self) -> list[str]:
        return [call.path for call in self.calls]

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """The status and JSON the stand-in answers to ``body`` on ``path``."""
        faults = self.faults
        if faults.status is not None:
            return faults.status, {"error": "scripted failure"}
        if path == "/chunks":
            chunks = service_chunks(body)
            if faults.skip_index:
                for chunk in chunks[1:]:
                    chunk["index"] += 1
                if len(chunks) == 1:
                    chunks[0]["index"] = 1
            return 200, {
                "version": faults.version,
                "max_tokens": body.get("max_tokens"),
                "overlap_tokens": body.get("overlap_tokens"),
                "chunks": chunks,
            }
        if path == "/embed":
            vector = self._vector(str(body.get("text", "")))
            return 200, {"vector": vector, "dim": self.dimensions}
        if path == "/v1/embeddings":
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            data = [
                {"object": "embedding", "index": i, "embedding": self._vector(t)} for i, t in enumerate(texts)
            ]
            return 200, {"object": "list", "data": data, "model": body.get("model")}
        if path.startswith("/model/") and path.endswith("/invoke"):
            vector = self._vector(
                str(body.get("inputText", "")), int(body.get("dimensions", self.dimensions))
            )
            return 200, {
                "embedding": vector,
                "inputTextTokenCount": len(str(body.get("inputText", "")).split()),
            }
        return 404, {"error": "no such route"}

    def _vector(self, text: str, dimensions: int | None = None) -> list[float]:
        vector = hashed_vector(text, dimensions or self.dimensions)
        if self.faults.wrong_dimension:
            vector = vector[:-1]
        if self.faults.non_finite:
            vector[0] = float("nan")
        return vector


class _Handler(BaseHTTPRequestHandler):
    standin: EmbeddingStandIn

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        standin = self.server.standin  # type: ignore[attr-defined]
        standin.calls.append(Call(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        if standin.faults.delay_s:
            time.sleep(standin.faults.delay_s)
        status, answer = standin.answer(self.path, body)
        data = json.dumps(answer).encode()  # NaN is written as the token NaN, as a broken service would
        with contextlib.suppress(OSError):  # the client may have given up (a time-out test)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def embedding_standin(dimensions: int = DIMENSIONS) -> Iterator[EmbeddingStandIn]:
    """The stand-in on a free loopback port for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    standin = EmbeddingStandIn(url=f"http://127.0.0.1:{server.server_address[1]}", dimensions=dimensions)
    server.standin = standin  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="embedding-standin", daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (a provider that is down)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
