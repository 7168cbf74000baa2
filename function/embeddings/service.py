"""The embedding service the original blog used, over its HTTP protocol:

- ``POST {base}/embed`` ``{"text", "mode": "query"|"document"}`` → ``{"vector", "dim"}``;
- ``POST {base}/chunks`` ``{"title", "description", "content", "max_tokens", "overlap_tokens"}`` →
  ``{"version", "max_tokens", "overlap_tokens", "chunks": [{"index", "heading", "content",
  "embedding_text", "token_count"}]}``.

The service chunks the articles itself, so its ``version`` (with the sizes asked for) is what is stored
as the chunking. Every answer is checked: a vector as long as its ``dim`` and as every earlier one, finite
values, chunks numbered 0, 1, 2… in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from function.embeddings.checks import DimensionPin, sequential, vector_of
from function.embeddings.http_json import HttpClients, post_json
from function.embeddings.port import (
    MAX_TOKENS,
    OVERLAP_TOKENS,
    ArticleText,
    Chunking,
    TextChunk,
    Vector,
)
from function.errors import EmbeddingFailed

PROVIDER = "the embedding service"


class ServiceEmbeddings:
    """``EmbeddingProvider`` on the original embedding service at ``base_url``."""

    def __init__(
        self,
        base_url: str,
        http: HttpClients,
        *,
        api_key: str | None = None,
        model: str | None = None,
        max_tokens: int = MAX_TOKENS,
        overlap_tokens: int = OVERLAP_TOKENS,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._http = http
        self._api_key = api_key
        self._model = f"service:{model or 'default'}"
        self._max_tokens = max_tokens
        self._overlap_tokens = overlap_tokens
        self._dimension = DimensionPin()
        self._chunking: str | None = None  # the version of the service's last /chunks answer

    @property
    def model(self) -> str:
        return self._model

    @property
    def chunking(self) -> str | None:
        return self._chunking

    def chunk(self, article: ArticleText) -> Chunking:
        answer = post_json(
            self._http.documents,
            f"{self._base}/chunks",
            {
                "title": article.title,
                "description": article.description,
                "content": article.content,
                "max_tokens": self._max_tokens,
                "overlap_tokens": self._overlap_tokens,
            },
            provider=PROVIDER,
            api_key=self._api_key,
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("chunks"), list):
            raise EmbeddingFailed(f"{PROVIDER} answered /chunks without a list of chunks")
        version = answer.get("version")
        if not isinstance(version, (str, int)) or isinstance(version, bool) or str(version) == "":
            raise EmbeddingFailed(f"{PROVIDER} answered /chunks without a version")
        chunks = sequential([_chunk(item) for item in answer["chunks"]], PROVIDER)
        if not chunks:
            raise EmbeddingFailed(f"{PROVIDER} answered /chunks with no chunk")
        max_tokens = answer.get("max_tokens", self._max_tokens)
        overlap = answer.get("overlap_tokens", self._overlap_tokens)
        self._chunking = f"service-{version}:{max_tokens}:{overlap}"
        return Chunking(self._chunking, chunks)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        return [self._embed(text, "document") for text in texts]

    def embed_query(self, text: str) -> Vector:
        return self._embed(text, "query")

    def _embed(self, text: str, mode: str) -> Vector:
        http = self._http.queries if mode == "query" else self._http.documents
        answer = post_json(
            http,
            f"{self._base}/embed",
            {"text": text, "mode": mode},
            provider=PROVIDER,
            api_key=self._api_key,
        )
        if not isinstance(answer, dict):
            raise EmbeddingFailed(f"{PROVIDER} answered /embed without a vector")
        vector = vector_of(answer.get("vector"), PROVIDER, declared_dim=answer.get("dim"))
        return self._dimension.check(vector, PROVIDER)


def _chunk(item: Any) -> TextChunk:
    """One chunk of a /chunks answer, its fields' types checked."""
    if not isinstance(item, dict):
        raise EmbeddingFailed(f"{PROVIDER} answered a chunk that is not an object")
    index, count = item.get("index"), item.get("token_count", 0)
    texts = [item.get(name, "") for name in ("heading", "content", "embedding_text")]
    if (
        not isinstance(index, int)
        or isinstance(index, bool)
        or not isinstance(count, int)
        or not all(isinstance(text, str) for text in texts)
    ):
        raise EmbeddingFailed(f"{PROVIDER} answered a chunk whose fields have the wrong types")
    heading, content, embedding_text = texts
    if not (embedding_text or content).strip():
        raise EmbeddingFailed(f"{PROVIDER} answered chunk {index} with no text")
    return TextChunk(index, heading or "", content, embedding_text or content, count)
