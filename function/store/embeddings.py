"""Semantic search's part of the store: each served article's chunks and vectors (``ArticleChunk``), what
they were computed from (``ArticleEmbedding``), which articles need them computed (again), and one user's
vectors for the search.

The embedding calls are never made inside a transaction here: the sync asks which articles are due
(``due``), reads their text (``texts``), calls the provider with no transaction open, then writes one
article's chunks in one short transaction (``save``), which first checks that the article was not
changed meanwhile (a vector of an older text is not stored as the new text's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import peewee
from peewee import JOIN, fn

from function.store.base import StoreBase, translated
from function.store.batching import upsert_chunks, write_transaction
from function.store.bounds import groups, limits_of
from function.store.models import Article, ArticleBody, ArticleChunk, ArticleEmbedding, User


@dataclass(frozen=True)
class DueArticle:
    """An article whose vectors are missing or out of date: its current ``content_hash``, and the text
    hash, model and chunking its stored vectors were computed with (None: it has none)."""

    article_id: int
    article_hash: str
    stored_text_hash: str | None
    stored_model: str | None
    stored_chunking: str | None


@dataclass(frozen=True)
class StoredText:
    article_id: int
    article_hash: str
    title: str
    description: str
    content: str


@dataclass(frozen=True)
class ChunkRow:
    """One chunk to store: its place, heading, text, size and vector (float32)."""

    position: int
    heading: str
    content: str
    token_count: int
    vector: np.ndarray


@dataclass(frozen=True)
class UserVectors:
    """One user's stored vectors of one model: ``article_ids[i]`` owns row ``i`` of ``matrix``."""

    article_ids: np.ndarray  # int64, one per chunk
    matrix: np.ndarray  # float32, chunks by dimensions


def _served(user_id: int) -> peewee.Expression:
    return (Article.user == user_id) & (Article.publish == True) & (Article.archived == False)  # noqa: E712


def _stale(model: str, chunking: str | None) -> peewee.Expression:
    """The stored row is missing, or made from another article hash, model or chunking."""
    stale = (
        ArticleEmbedding.article.is_null()
        | (ArticleEmbedding.article_hash != Article.content_hash)
        | (ArticleEmbedding.model != model)
    )
    if chunking is not None:
        stale |= ArticleEmbedding.chunking != chunking
    return stale


class EmbeddingQueries(StoreBase):
    """The chunks and vectors of served (published, not archived) articles."""

    @translated
    def due(self, user_id: int, model: str, chunking: str | None, *, limit: int) -> list[DueArticle]:
        """At most ``limit`` of the user's served articles whose vectors are missing or were made from
        another article hash, model or (when given) chunking version; oldest article first. One SELECT
        on the ids and hashes only."""
        query = (
            Article.select(
                Article.id,
                Article.content_hash,
                ArticleEmbedding.text_hash,
                ArticleEmbedding.model,
                ArticleEmbedding.chunking,
            )
            .join(ArticleEmbedding, JOIN.LEFT_OUTER, on=(ArticleEmbedding.article == Article.id))
            .where(_served(user_id) & _stale(model, chunking))
            .order_by(Article.id)
            .limit(limit)
        )
        return [DueArticle(int(row[0]), *row[1:]) for row in self._rows(query)]

    @translated
    def missing_count(self, model: str, chunking: str | None, user_id: int | None = None) -> dict[str, int]:
        """Served articles without current vectors, by user name (every user, or ``user_id`` alone);
        users with none missing are left out."""
        where = (Article.publish == True) & (Article.archived == False) & _stale(model, chunking)  # noqa: E712
        if user_id is not None:
            where &= Article.user == user_id
        query = (
            Article.select(User.name, fn.COUNT(Article.id))
            .join(User, on=(Article.user == User.id))
            .switch(Article)
            .join(ArticleEmbedding, JOIN.LEFT_OUTER, on=(ArticleEmbedding.article == Article.id))
            .where(where)
            .group_by(User.name)
        )
        return {str(name): int(count) for name, count in self._rows(query)}

    @translated
    def texts(self, article_ids: Sequence[int]) -> list[StoredText]:
        """What is embedded of each article (in ``article_ids``' order; those gone are left out)."""
        found: dict[int, StoredText] = {}
        for chunk in groups(list(article_ids), max_items=limits_of(self._db).keys(reserved=0)):
            query = (
                Article.select(
                    Article.id, Article.content_hash, Article.title, Article.description, ArticleBody.content
                )
                .join(ArticleBody, on=(ArticleBody.article == Article.id))
                .where(Article.id.in_(chunk))
            )
            for row_id, article_hash, title, description, content in self._rows(query):
                found[int(row_id)] = StoredText(int(row_id), article_hash, title, description or "", content)
        return [found[i] for i in article_ids if i in found]

    @translated
    def keep(self, article_id: int, article_hash: str, text_hash: str) -> bool:
        """The article changed but not its text: its stored vectors now stand for ``article_hash`` (one
        UPDATE, no embedding). False when its stored vectors are of another text."""
        updated = (
            ArticleEmbedding.update(article_hash=article_hash)
            .where((ArticleEmbedding.article == article_id) & (ArticleEmbedding.text_hash == text_hash))
            .bind(self._db)
            .execute()
        )
        return bool(updated)

    @translated
    def save(
        self,
        article_id: int,
        article_hash: str,
        text_hash: str,
        *,
        chunking: str,
        model: str,
        chunks: Sequence[ChunkRow],
        now: datetime,
    ) -> bool:
        """Replace the article's chunks and vectors in one transaction, unless the article changed since
        ``article_hash`` was read (or is gone): then nothing is written and False is answered (the next
        sync computes them for the new text)."""
        if not chunks:
            raise ValueError("an article's vectors are at least one chunk")
        dimensions = {len(chunk.vector) for chunk in chunks}
        if len(dimensions) != 1:
            raise ValueError("an article's chunks must all have vectors of one dimension")
        rows = [
            {
                "article": article_id,
                "position": chunk.position,
                "heading": chunk.heading,
                "content": chunk.content,
                "token_count": chunk.token_count,
                "vector": pack(chunk.vector),
            }
            for chunk in chunks
        ]
        with write_transaction(self._db):
            current = self._first(
                self._locking(Article.select(Article.content_hash).where(Article.id == article_id))
            )
            if current is None or current[0] != article_hash:
                return False
            ArticleChunk.delete().where(ArticleChunk.article == article_id).bind(self._db).execute()
            ArticleEmbedding.delete().where(ArticleEmbedding.article == article_id).bind(self._db).execute()
            for group in upsert_chunks(self._db, rows):
                ArticleChunk.insert_many(group).bind(self._db).execute()
            ArticleEmbedding.insert(
                article=article_id,
                article_hash=article_hash,
                text_hash=text_hash,
                chunking=chunking,
                model=model,
                dimensions=dimensions.pop(),
                chunk_count=len(rows),
                embedded_at=now,
            ).bind(self._db).execute()
        return True

    @translated
    def fingerprint(self, user_id: int, model: str) -> tuple[int, int, str]:
        """What changes whenever the user's searchable vectors do (an article embedded again, added,
        archived): their count, the sum of their article ids and the latest time one was written. One
        aggregate SELECT: the key of the process's cache (``vector_search``)."""
        query = (
            ArticleEmbedding.select(
                fn.COUNT(ArticleEmbedding.article),
                fn.SUM(ArticleEmbedding.article),
                fn.MAX(ArticleEmbedding.embedded_at),
            )
            .join(Article, on=(ArticleEmbedding.article == Article.id))
            .where(_served(user_id) & (ArticleEmbedding.model == model))
        )
        row = self._first(query)
        count, total, latest = row if row is not None else (0, 0, None)
        return int(count or 0), int(total or 0), str(latest or "")

    @translated
    def vectors(self, user_id: int, model: str) -> UserVectors:
        """Every chunk vector of the user's served articles made by ``model`` (vectors of a dimension
        other than the most common one are left out: they cannot be compared)."""
        query = (
            ArticleChunk.select(ArticleChunk.article, ArticleChunk.vector)
            .join(ArticleEmbedding, on=(ArticleEmbedding.article == ArticleChunk.article))
            .join(Article, on=(Article.id == ArticleChunk.article))
            .where(_served(user_id) & (ArticleEmbedding.model == model))
            .order_by(ArticleChunk.article, ArticleChunk.position)
        )
        ids: list[int] = []
        packed: list[bytes] = []
        for article_id, blob in self._rows(query):
            ids.append(int(article_id))
            packed.append(bytes(blob))
        if not packed:
            return UserVectors(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
        sizes = [len(blob) for blob in packed]
        common = max(set(sizes), key=sizes.count)
        keep = [i for i, size in enumerate(sizes) if size == common]
        matrix = np.frombuffer(b"".join(packed[i] for i in keep), dtype="<f4").reshape(len(keep), -1)
        return UserVectors(np.array([ids[i] for i in keep], dtype=np.int64), matrix.astype(np.float32))


def pack(vector: np.ndarray) -> bytes:
    """A vector as stored: float32, little-endian, 4 bytes a dimension."""
    return np.asarray(vector, dtype="<f4").tobytes()


def unpack(blob: bytes) -> np.ndarray:
    """A stored vector read back (float32)."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)
