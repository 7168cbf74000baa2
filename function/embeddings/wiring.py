"""The embedding provider named by the settings (``EMBEDDING_PROVIDER``), or None when semantic search is
off. Nothing is connected here: the HTTP and AWS clients open on their first call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from function.embeddings.http_json import HttpClients
from function.embeddings.port import EmbeddingProvider

if TYPE_CHECKING:
    from function.settings import Settings


def provider_from_settings(settings: Settings) -> EmbeddingProvider | None:
    """``service``, ``bedrock`` or ``openai`` as configured; None without ``EMBEDDING_PROVIDER``."""
    kind = settings.embedding_provider
    if kind is None:
        return None
    if kind == "bedrock":
        return bedrock_from_settings(settings)
    http = HttpClients.default(settings.https_proxy, settings.no_proxy)
    url = settings.embedding_url or ""  # Settings refuses service/openai without one
    if kind == "service":
        from function.embeddings.service import ServiceEmbeddings

        return ServiceEmbeddings(
            url, http, api_key=settings.embedding_api_key, model=settings.embedding_model
        )
    from function.embeddings.openai_compatible import OpenAiEmbeddings

    return OpenAiEmbeddings(url, http, api_key=settings.embedding_api_key, model=settings.embedding_model)


def bedrock_from_settings(settings: Settings) -> EmbeddingProvider:
    """Titan V2 through botocore clients with the function's time-outs, proxy and NO_PROXY; credentials
    and region from the environment (the function's role on Lambda)."""
    from function.aws import clients as aws_clients
    from function.embeddings.bedrock import BedrockEmbeddings

    def client(read_timeout: float, attempts: int) -> Any:
        return aws_clients.client(
            "bedrock-runtime",
            connect_timeout=3,
            read_timeout=read_timeout,
            attempts=attempts,
            https_proxy=settings.https_proxy,
            no_proxy=settings.no_proxy,
            endpoint_url=settings.embedding_url,
        )

    return BedrockEmbeddings(
        lambda: client(20, 3),
        lambda: client(5, 2),
        model=settings.embedding_model,
    )
