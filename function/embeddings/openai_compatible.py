"""An OpenAI-compatible embeddings endpoint: ``POST {base}/v1/embeddings`` ``{"model", "input": [texts]}``
→ ``{"data": [{"index", "embedding"}]}`` (OpenAI, Azure OpenAI's compatible route, Ollama, vLLM, LiteLLM…).
The articles are chunked here (``chunking``); documents are sent in batches of ``BATCH``."""

from __future__ import annotations

from collections.abc import Sequence

from function.embeddings.checks import DimensionPin, vector_of
from function.embeddings.chunking import LOCAL_CHUNKING, chunk_article
from function.embeddings.http_json import HttpClients, post_json
from function.embeddings.port import ArticleText, Chunking, Vector
from function.errors import EmbeddingFailed

PROVIDER = "the OpenAI-compatible endpoint"
DEFAULT_MODEL = "text-embedding-3-small"
# Texts per request: well under OpenAI's 2,048 inputs and 300,000 tokens a request (64 chunks of 512).
BATCH = 64


def embeddings_url(base_url: str) -> str:
    """``{base}/v1/embeddings``; a base that already ends in ``/v1`` gets ``/embeddings`` only."""
    base = base_url.rstrip("/")
    return f"{base}/embeddings" if base.endswith("/v1") else f"{base}/v1/embeddings"


class OpenAiEmbeddings:
    """``EmbeddingProvider`` on an OpenAI-compatible ``/v1/embeddings``."""

    def __init__(
        self, base_url: str, http: HttpClients, *, api_key: str | None = None, model: str | None = None
    ) -> None:
        self._url = embeddings_url(base_url)
        self._http = http
        self._api_key = api_key
        self._model_name = model or DEFAULT_MODEL
        self._dimension = DimensionPin()

    @property
    def model(self) -> str:
        return f"openai:{self._model_name}"

    @property
    def chunking(self) -> str | None:
        return LOCAL_CHUNKING

    def chunk(self, article: ArticleText) -> Chunking:
        return chunk_article(article)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        vectors: list[Vector] = []
        for start in range(0, len(texts), BATCH):
            vectors += self._embed(list(texts[start : start + BATCH]), queries=False)
        return vectors

    def embed_query(self, text: str) -> Vector:
        return self._embed([text], queries=True)[0]

    def _embed(self, texts: list[str], *, queries: bool) -> list[Vector]:
        answer = post_json(
            self._http.queries if queries else self._http.documents,
            self._url,
            {"model": self._model_name, "input": texts, "encoding_format": "float"},
            provider=PROVIDER,
            api_key=self._api_key,
        )
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise EmbeddingFailed(f"{PROVIDER} answered {_count(data)} embeddings for {len(texts)} texts")
        by_index = {item.get("index"): item for item in data if isinstance(item, dict)}
        if sorted(by_index, key=str) != sorted(range(len(texts)), key=str):
            raise EmbeddingFailed(f"{PROVIDER} answered embeddings whose indexes are not 0…{len(texts) - 1}")
        return [
            self._dimension.check(vector_of(by_index[i].get("embedding"), PROVIDER), PROVIDER)
            for i in range(len(texts))
        ]


def _count(data: object) -> str:
    return str(len(data)) if isinstance(data, list) else "no"
