"""The parts of the store the sync uses, as narrow ports: ``function.store.facade.PeeweeStore`` is the
real one, and a test may hand any object with these methods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, Unpack

from function.articles.parsed import ParsedArticle
from function.store.book_records import BookWrite, StoredBook
from function.store.job_turns import DeliveryStart, OpenedPush, TurnRead
from function.store.records import (
    ApplyResult,
    DeliveryFinish,
    DeliveryRecord,
    RememberedFailure,
    StoredArticle,
    UserRecord,
)


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
    ) -> ApplyResult: ...

    def remember_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None: ...


class DeliveryLog(Protocol):
    """The delivery records: what the worker saw, for idempotency and operators."""

    def get_delivery(self, delivery_id: str) -> DeliveryRecord | None: ...

    def last_sync(self, installation_id: int, repository: str) -> DeliveryRecord | None: ...

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

    def finish_and_release(
        self, user_id: int, delivery_id: str, /, **finish: Unpack[DeliveryFinish]
    ) -> None: ...


class BookStore(Protocol):
    """Zenn books: their index, one book's write, archiving, and the books that failed
    (``function.store.books.BookQueries``)."""

    def load_book_index(self, user_id: int) -> Mapping[str, StoredBook]: ...

    def load_book_failures(self, user_id: int) -> Mapping[str, RememberedFailure]: ...

    def remember_book_failures(
        self, user_id: int, failures: Sequence[RememberedFailure], forget_slugs: Sequence[str]
    ) -> None: ...

    def apply_book(
        self, user_id: int, write: BookWrite, stored: StoredBook | None, now: datetime
    ) -> str | None: ...

    def archive_books(self, user_id: int, slugs: Sequence[str], now: datetime) -> list[str]: ...


class WorkerStore(ArticleWrites, DeliveryLog, BookStore, Protocol):
    """Everything the worker asks of the store: the ports above, users and their locks."""

    def installation_user_locked(
        self, installation_id: int, timeout_s: float
    ) -> AbstractContextManager[UserRecord | None]: ...

    def user_lock(self, user_id: int, timeout_s: float) -> AbstractContextManager[None]: ...

    def push_opened(
        self, timeout_s: float, start: DeliveryStart, also: TurnRead | None = None
    ) -> AbstractContextManager[OpenedPush]: ...

    def get_user(self, name: str) -> UserRecord | None: ...

    def pin_repository(self, user_id: int, repository: str, repository_id: int | None) -> None: ...

    def load_index(self, user_id: int) -> Mapping[str, StoredArticle]: ...

    def load_failures(self, user_id: int) -> Mapping[str, RememberedFailure]: ...
