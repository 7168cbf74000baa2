"""Amazon Bedrock's Titan Text Embeddings V2 (``amazon.titan-embed-text-v2:0``), through the
``bedrock-runtime`` ``InvokeModel`` call: ``{"inputText", "dimensions", "normalize"}`` →
``{"embedding", "inputTextTokenCount"}``. The function's role needs ``bedrock:InvokeModel`` on the model
(the Pulumi program grants it when ``embeddingProvider`` is ``bedrock``). Titan embeds one text a call and
does not tell queries from documents; the articles are chunked here (``chunking``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from function.embeddings.checks import DimensionPin, vector_of
from function.embeddings.chunking import LOCAL_CHUNKING, chunk_article
from function.embeddings.port import ArticleText, Chunking, Vector
from function.errors import EmbeddingFailed
from shared.runtime_settings import BEDROCK_EMBEDDING_MODEL

PROVIDER = "Amazon Bedrock"
DEFAULT_MODEL = BEDROCK_EMBEDDING_MODEL
# Titan V2 makes 256, 512 or 1,024 dimensions; 1,024 scores best on its own benchmarks, and 4 KB a chunk
# stays small beside the article's text.
DIMENSIONS = 1024
# Titan V2 takes at most 50,000 characters; a chunk is far below, a reader's query is cut to it.
MAX_INPUT_CHARS = 50_000

# Builds the bedrock-runtime client (on first use): one for the sync, one for readers' queries.
ClientFactory = Callable[[], Any]


class BedrockEmbeddings:
    """``EmbeddingProvider`` on Titan Text Embeddings V2."""

    def __init__(
        self,
        documents_client: ClientFactory,
        queries_client: ClientFactory,
        *,
        model: str | None = None,
        dimensions: int = DIMENSIONS,
    ) -> None:
        self._factories = {"documents": documents_client, "queries": queries_client}
        self._clients: dict[str, Any] = {}
        self._model_id = model or DEFAULT_MODEL
        self._dimensions = dimensions
        self._dimension = DimensionPin(dimensions)

    @property
    def model(self) -> str:
        return f"bedrock:{self._model_id}:{self._dimensions}"

    @property
    def chunking(self) -> str | None:
        return LOCAL_CHUNKING

    def chunk(self, article: ArticleText) -> Chunking:
        return chunk_article(article)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        return [self._embed(text, "documents") for text in texts]

    def embed_query(self, text: str) -> Vector:
        return self._embed(text, "queries")

    def _client(self, purpose: str) -> Any:
        if purpose not in self._clients:
            self._clients[purpose] = self._factories[purpose]()
        return self._clients[purpose]

    def _embed(self, text: str, purpose: str) -> Vector:
        from botocore.exceptions import BotoCoreError, ClientError

        body = {"inputText": text[:MAX_INPUT_CHARS], "dimensions": self._dimensions, "normalize": True}
        try:
            answer = self._client(purpose).invoke_model(
                modelId=self._model_id,
                body=json.dumps(body, ensure_ascii=False).encode(),
                contentType="application/json",
                accept="application/json",
            )
            payload = json.loads(answer["body"].read())
        except ClientError as exc:
            # The error's code and status only: its message may quote the request.
            code = exc.response.get("Error", {}).get("Code", "error")
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
            raise EmbeddingFailed(f"{PROVIDER} refused InvokeModel: {code} (HTTP {status})") from None
        except BotoCoreError as exc:
            raise EmbeddingFailed(f"{PROVIDER} could not be reached: {type(exc).__name__}") from None
        except (ValueError, KeyError):
            raise EmbeddingFailed(f"{PROVIDER} answered something other than JSON") from None
        if not isinstance(payload, dict):
            raise EmbeddingFailed(f"{PROVIDER} answered without an embedding")
        return self._dimension.check(vector_of(payload.get("embedding"), PROVIDER), PROVIDER)
