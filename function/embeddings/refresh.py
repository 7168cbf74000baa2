"""The sync's embedding step: after a sync's articles are committed, the user's served articles whose
vectors are missing or out of date get them.

It runs after the sync, with no transaction open and the user's lock released: the provider's calls
never hold the database. What it writes is per article, in one short transaction each
(``EmbeddingQueries.save``). An embedding failure never fails the sync: the articles are served
already; the failure is logged and the article's vectors are retried at the next push (they are still
missing, so still due). The step stops early, leaving the rest for the next push, when the deadline
nears, or after ``GIVE_UP_AFTER`` failures in a row (a provider that is down costs one or two calls a
push, not one per article).

An article whose ``content_hash`` changed but whose text did not (a tag, a date) keeps its vectors: one
UPDATE, no call to the provider.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from function.aws.deadline import UNLIMITED, Deadline
from function.embeddings.port import ArticleText, EmbeddingProvider
from function.errors import EmbeddingFailed
from function.store.embeddings import ChunkRow, DueArticle, EmbeddingQueries, StoredText

log = logging.getLogger(__name__)

# Articles read per round (their Markdown is held meanwhile).
ROUND_ARTICLES = 20
# The most articles one sync embeds: a first sync of a large blog spreads over several pushes (each
# commits what it embedded), and a sync's time stays bounded.
MAX_ARTICLES_PER_SYNC = 500
# Failures in a row after which the step stops for this sync.
GIVE_UP_AFTER = 2
# Time kept free before the deadline: no article is started with less left (one article's calls).
MARGIN_S = 30.0

Clock = Callable[[], datetime]


def text_hash(article: ArticleText) -> str:
    """sha256 of what is embedded of an article: its title, description and body."""
    payload = json.dumps([article.title, article.description, article.content], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class RefreshTally:
    """What one step did: articles embedded, kept (text unchanged), failed, and still due after it."""

    embedded: int = 0
    kept: int = 0
    failed: int = 0
    stopped: str | None = None  # why it stopped before every due article was done

    def log_fields(self) -> dict[str, object]:
        return {
            "vectors_embedded": self.embedded,
            "vectors_kept": self.kept,
            "vectors_failed": self.failed,
            "vectors_stopped": self.stopped or "",
        }


class VectorRefresh:
    """Brings one user's vectors up to date with ``provider`` (see the module's docstring)."""

    def __init__(
        self,
        provider: EmbeddingProvider,
        queries: EmbeddingQueries,
        clock: Clock,
        *,
        max_articles: int = MAX_ARTICLES_PER_SYNC,
        margin_s: float = MARGIN_S,
    ) -> None:
        self._provider = provider
        self._queries = queries
        self._clock = clock
        self._max_articles = max_articles
        self._margin_s = margin_s

    def run(self, user_id: int, deadline: Deadline = UNLIMITED) -> RefreshTally:
        """Embed the user's due articles; never raises for the provider's failures or the database's (they
        are logged: the sync that called this has committed its articles already)."""
        tally = RefreshTally()
        try:
            self._run(self._queries, user_id, deadline, tally)
        except Exception as exc:  # noqa: BLE001 - the database failing here must not fail a committed sync
            tally.stopped = f"error: {type(exc).__name__}"
            log.warning("Vectors not refreshed", extra={"user_id": user_id, "error_type": type(exc).__name__})
        log.info("Vectors refreshed", extra={"user_id": user_id, **tally.log_fields()})
        return tally

    def _run(self, queries: EmbeddingQueries, user_id: int, deadline: Deadline, tally: RefreshTally) -> None:
        provider = self._provider
        due = queries.due(user_id, provider.model, provider.chunking, limit=self._max_articles)
        in_a_row = 0
        for start in range(0, len(due), ROUND_ARTICLES):
            round_due = {d.article_id: d for d in due[start : start + ROUND_ARTICLES]}
            for stored in queries.texts(list(round_due)):
                if not deadline.allows(self._margin_s):
                    tally.stopped = "deadline"
                    return
                try:
                    self._one(queries, round_due[stored.article_id], stored, tally)
                    in_a_row = 0
                except EmbeddingFailed as exc:
                    tally.failed += 1
                    in_a_row += 1
                    # The message names the provider and what was wrong, never a key or the text.
                    log.warning(
                        "Article not embedded",
                        extra={"user_id": user_id, "article_id": stored.article_id, "error": exc.detail},
                    )
                    if in_a_row >= GIVE_UP_AFTER:
                        tally.stopped = "provider failing"
                        return

    def _one(
        self, queries: EmbeddingQueries, due: DueArticle, stored: StoredText, tally: RefreshTally
    ) -> None:
        provider = self._provider
        article = ArticleText(stored.title, stored.description, stored.content)
        digest = text_hash(article)
        # A provider that chunks itself tells its version only once it chunked: till then, the model alone.
        same_chunking = provider.chunking is None or due.stored_chunking == provider.chunking
        same_recipe = due.stored_model == provider.model and same_chunking
        if due.stored_text_hash == digest and same_recipe:
            if queries.keep(stored.article_id, stored.article_hash, digest):
                tally.kept += 1
                return
        chunking = provider.chunk(article)
        vectors = provider.embed_documents([chunk.embedding_text for chunk in chunking.chunks])
        rows = [
            ChunkRow(chunk.index, chunk.heading, chunk.content, chunk.token_count, vector)
            for chunk, vector in zip(chunking.chunks, vectors, strict=True)
        ]
        if queries.save(
            stored.article_id,
            stored.article_hash,
            digest,
            chunking=chunking.version,
            model=provider.model,
            chunks=rows,
            now=self._clock(),
        ):
            tally.embedded += 1
