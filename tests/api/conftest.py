"""A read API on a real database: the app and a way to put articles into its store."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from function.app import create_app
from function.articles.parsed import ParsedArticle
from function.services import Services
from function.settings import Settings
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from tests.kit.builders import apply_as_worker
from tests.kit.deliveries import SECRET

USER = "alice"
ORIGIN = "https://blog.example.com"
SITE = "https://blog.example.com"


@dataclass
class ReadApi:
    db: Any
    app: Flask
    user_ids: dict[str, int]

    @property
    def client(self) -> FlaskClient:
        return self.app.test_client()

    def add(self, articles: Sequence[ParsedArticle], when: datetime, *, user: str = USER) -> None:
        """Store ``articles`` as a sync at ``when`` would (first published at ``when``)."""
        with connection(self.db):
            apply_as_worker(PeeweeStore(self.db), self.user_ids[user], list(articles), [], when)

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, **kwargs)


@pytest.fixture
def make_api(db_url: str) -> Iterator[Callable[..., ReadApi]]:
    """``make_api(**settings)``: the app in Lambda mode with users alice and bob, on ``db_url``."""
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        store = PeeweeStore(db)
        ids = {
            name: store.users.add_user(name, f"{name}@example.com", n).id
            for n, name in ((1, USER), (2, "bob"))
        }

    def make(**overrides: Any) -> ReadApi:
        values: dict[str, Any] = {
            "webhook_secret": SECRET,
            "database_url": db_url,
            "lambda_function_name": "d-st-blog-api",
            "article_source": "dir:/nonexistent",
            "site_url": SITE,
        }
        values.update(overrides)
        app = create_app(services=Services(Settings(**values), database=db))
        return ReadApi(db, app, ids)

    yield make
    db.close()


@pytest.fixture
def api(make_api: Callable[..., ReadApi]) -> ReadApi:
    return make_api()
