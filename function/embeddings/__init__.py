"""Semantic search's embeddings: one small port (``port.EmbeddingProvider``) with three adapters (the
original embedding service's HTTP protocol, Amazon Bedrock's Titan Text Embeddings V2, an OpenAI-compatible
``/v1/embeddings``), the local chunker the last two use, the step of the sync that keeps each served
article's vectors current (``refresh``), and the exact cosine search over them (``vector_search``)."""
