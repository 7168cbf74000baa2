"""The parts of the store the sync uses, as narrow ports: ``function.store.facade.PeeweeStore`` is the
real one (its parts ``users``, ``locks``, ``reconcile``, ``deliveries`` and ``books``), and a test may hand
any object with these parts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, Unpack

from function.articles.parsed import ParsedArticle
from function.aws.deadline import Deadline
from function.store.book_records import BookWrite, StoredBook
from function.store.records import (
    ApplyResult,
    DeliveryFinish,
    DeliveryRecord,
    RememberedFailure,
    StoredArticle,
    UserRecord,
)


class Users(Protocol):
    """The users the sync reads, the repository a first push pins, the source a first sync binds and a
    confirmed mass removal (``function.store.users``)."""

    def get_user(self, name: str) -> UserRecord | None: ...

    def pin_repository(self, user_id: int, repository: str, repository_id: int | None) -> None: ...

    def bind_source(self, user_id: int, source: str) -> None: ...

    def confirm_removal(self, user_id: int, count: int | None) -> None: ...


class Locks(Protocol):
    """The per-user sync lock (``function.store.locks``)."""

    def installation_user_locked(
        self, installation_id: int, timeout_s: float
    ) -> AbstractContextManager[UserRecord | None]: ...

    def user_lock(self, user_id: int, timeout_s: float) -> AbstractContextManager[None]: ...


class ArticleWrites(Protocol):
    """Where the sync's reads are committed and its parse failures remembered."""

    def apply(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        archive_slugs: Sequence[str],
        now: datetime,
        *,
        index: Mapping[str, StoredArticle],
        render_fingerprint: str | None = None,
        reindex: bool = False,
    ) -> ApplyResult: ...

    def remember_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None: ...

    def row_bytes(self, user_id: int, slugs: Sequence[str]) -> Mapping[str, int]: ...


class Articles(ArticleWrites, Protocol):
    """What is stored of the articles, and the writes (``function.store.reconcile``)."""

    def load_index(self, user_id: int) -> Mapping[str, StoredArticle]: ...

    def load_failures(self, user_id: int) -> Mapping[str, RememberedFailure]: ...


class DeliveryLog(Protocol):
    """The delivery records: what the worker saw, for idempotency and operators
    (``function.store.deliveries``)."""

    def delivery_and_last_sync(
        self, delivery_id: str, installation_id: int, repository: str
    ) -> tuple[DeliveryRecord | None, DeliveryRecord | None]: ...

    def start_delivery(
        self,
        delivery_id: str,
        event: str,
        installation_id: int | None,
        repository: str | None,
        received_at: datetime,
        now: datetime,
    ) -> None: ...

    def finish_delivery(self, delivery_id: str, **finish: Unpack[DeliveryFinish]) -> None: ...


class BookStore(Protocol):
    """Zenn books: their index, one book's write, archiving, and the books that failed
    (``function.store.books``)."""

    def load_book_index(self, user_id: int) -> Mapping[str, StoredBook]: ...

    def load_book_failures(self, user_id: int) -> Mapping[str, RememberedFailure]: ...

    def remember_book_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None: ...

    def apply_book(
        self, user_id: int, write: BookWrite, stored: StoredBook | None, now: datetime
    ) -> str | None: ...

    def archive_books(self, user_id: int, slugs: Sequence[str], now: datetime) -> list[str]: ...


class VectorStep(Protocol):
    """What runs after a sync when semantic search is on: the user's vectors brought up to date
    (``function.embeddings.refresh.VectorRefresh``). Never raises for a provider's failure."""

    def run(self, user_id: int, deadline: Deadline) -> object: ...


class WorkerStore(Protocol):
    """Everything the worker asks of the store, part by part (read-only attributes, so the store's own
    classes for each part fit)."""

    @property
    def users(self) -> Users: ...

    @property
    def locks(self) -> Locks: ...

    @property
    def reconcile(self) -> Articles: ...

    @property
    def deliveries(self) -> DeliveryLog: ...

    @property
    def books(self) -> BookStore: ...
