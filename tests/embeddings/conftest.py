"""Fixtures for the embedding adapters: the stand-in service on loopback, and clients whose time-outs a
test can wait out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from function.embeddings.http_json import HttpClients
from function.github.http import HttpClient
from tests.kit.embedding_standin import EmbeddingStandIn, embedding_standin


@pytest.fixture
def standin() -> Iterator[EmbeddingStandIn]:
    with embedding_standin() as running:
        yield running


@pytest.fixture
def quick_http() -> Iterator[HttpClients]:
    """Two tries, half a second to answer, no back-off to speak of: a slow stand-in is given up on fast."""
    documents = HttpClient(connect_timeout=1.0, read_timeout=0.5, attempts=2, backoff_factor=0.01)
    queries = HttpClient(connect_timeout=1.0, read_timeout=0.5, attempts=2, backoff_factor=0.01)
    yield HttpClients(documents, queries)
    documents.close()
    queries.close()
