"""An end-to-end blog for integration tests: the real app, the real store on SQLite or MariaDB, and
the GitHub source talking to the local GitHub stand-in.

``blog`` is in inline mode (the webhook processes in the request); ``blog.lambda_client()`` builds a
Lambda-mode app on the same database and stand-in, whose ``/events`` is reached through the handler's
pass-through, as on AWS.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from function.app import create_app
from function.aws.dispatch import dispatch
from function.services import Services
from function.settings import Settings
from function.store.backends import open_database
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from tests.kit.deliveries import SECRET, github_headers, push_payload
from tests.kit.fakes import RecordingInvoker
from tests.kit.github_fixtures import INSTALLATION_ID, REPO, AppKey, build_github_source
from tests.kit.github_standin import GitHubStandIn

USER = "alice"


def article(title: str, *, publish: bool = True, tags: tuple[str, ...] = (), body: str = "Hello.") -> bytes:
    """An article file in the real format."""
    lines = ["---", f"title: {json.dumps(title)}", f"publish: {'true' if publish else 'false'}"]
    if tags:
        lines.append("tags: [" + ", ".join(json.dumps(t) for t in tags) + "]")
    lines += ["---", "", body, ""]
    return "\n".join(lines).encode()


@dataclass
class Blog:
    github: GitHubStandIn
    db: Any
    settings: Settings
    source: Any
    invoker: RecordingInvoker = field(default_factory=RecordingInvoker)
    # The outgoing webhooks' transport, clock and alarm (function.hooks.wiring.HookParts); None: from
    # the settings, as deployed.
    hook_parts: Any = None
    # Where images are stored (function.assets.port.AssetStore); None: the folder ``settings.asset_dir``.
    asset_store: Any = None
    # The embedding provider (function.embeddings.port.EmbeddingProvider); None: the settings'.
    embedding_provider: Any = None
    _apps: dict[str, Flask] = field(default_factory=dict)

    @property
    def app(self) -> Flask:
        """The inline-mode app (local development shape)."""
        if "inline" not in self._apps:
            self._apps["inline"] = create_app(
                services=Services(
                    self.settings,
                    source=self.source,
                    database=self.db,
                    hook_parts=self.hook_parts,
                    asset_store=self.asset_store,
                    embedding_provider=self.embedding_provider,
                )
            )
        return self._apps["inline"]

    @property
    def client(self) -> FlaskClient:
        return self.app.test_client()

    def lambda_app(self) -> Flask:
        """The Lambda-mode app: accepts with the recording invoker; /events runs the worker."""
        if "lambda" not in self._apps:
            settings = Settings(**{**self.settings.__dict__, "lambda_function_name": "d-st-blog-api"})
            self._apps["lambda"] = create_app(
                services=Services(
                    settings,
                    source=self.source,
                    database=self.db,
                    invoker=self.invoker,
                    hook_parts=self.hook_parts,
                    asset_store=self.asset_store,
                    embedding_provider=self.embedding_provider,
                )
            )
        return self._apps["lambda"]

    @contextlib.contextmanager
    def store(self) -> Iterator[PeeweeStore]:
        from function.store.connection import connection

        with connection(self.db):
            yield PeeweeStore(self.db)

    def commit(self, files: dict[str, bytes | None]) -> str:
        """Commit changes (None deletes) to the stand-in's default branch; returns the new head."""
        return self.github.update_files(files, repo=REPO)

    def push_body(self, ref: str = "refs/heads/main") -> bytes:
        """A push payload as GitHub sends it: ``after`` is the branch head the push produced."""
        payload = push_payload(
            ref=ref, installation_id=INSTALLATION_ID, repo=REPO, after=self.github.head(repo=REPO)
        )
        return json.dumps(payload).encode()

    def push(self, *, delivery: str = "d-1", ref: str = "refs/heads/main") -> Any:
        """A signed push delivery to the inline app; returns the Flask response."""
        body = self.push_body(ref)
        return self.client.post(
            "/webhooks/github", data=body, headers=github_headers(body, delivery=delivery)
        )

    def deliver_via_lambda(self, *, delivery: str = "d-1") -> Any:
        """Accept a push in Lambda mode, then run the queued envelope through the handler's
        pass-through, as Lambda's asynchronous invocation would. Returns the pass-through's result
        (or raises PassThroughFailed on a 5xx, as the real handler does)."""
        app = self.lambda_app()
        body = self.push_body()
        answer = app.test_client().post(
            "/webhooks/github", data=body, headers=github_headers(body, delivery=delivery)
        )
        assert answer.status_code == 202, answer.get_json()
        return dispatch(app, json.loads(self.invoker.payloads[-1]), None)

    def articles(self, **params: str) -> list[dict[str, Any]]:
        """Every listed Summary, following ``nextCursor`` page by page (100 to a page)."""
        found: list[dict[str, Any]] = []
        query: dict[str, str] = {"limit": "100", **params}
        while True:
            answer = self.client.get(f"/users/{USER}/articles", query_string=query)
            assert answer.status_code == 200, answer.get_json()
            body = answer.get_json()
            found += body["articles"]
            if body["nextCursor"] is None:
                return found
            query["cursor"] = body["nextCursor"]

    def article(self, slug: str) -> dict[str, Any]:
        """The full Article ``slug`` (content included)."""
        answer = self.client.get(f"/users/{USER}/articles/{slug}")
        assert answer.status_code == 200, answer.get_json()
        found: dict[str, Any] = answer.get_json()
        return found


@pytest.fixture
def make_blog(
    db_url: str, github: GitHubStandIn, github_app_key: AppKey, tmp_path: Any
) -> Iterator[Callable[..., Blog]]:
    """A factory for a Blog on ``db_url`` (SQLite and MariaDB) with user ``alice`` on installation 1.

    Keyword arguments go to the GitHub source (e.g. ``max_workers``) or, prefixed ``http_``, to its
    HTTP client options."""
    made: list[Any] = []
    db = open_database(db_url)
    from function.store.connection import connection

    with connection(db):
        create_tables(db)
        PeeweeStore(db).users.add_user(USER, "alice@example.com", INSTALLATION_ID, REPO)

    def make(**options: Any) -> Blog:
        http_options = {k[5:]: v for k, v in options.items() if k.startswith("http_")}
        source_options = {k: v for k, v in options.items() if not k.startswith("http_")}
        parts = build_github_source(github, github_app_key, http_options=http_options, **source_options)
        made.append(parts)
        settings = Settings(
            webhook_secret=SECRET,
            github_app_id=str(github.app_id),
            github_private_key=github_app_key.private_pem,
            github_api_url=github.url,
            database_url=db_url,
            asset_dir=str(tmp_path / "assets"),
        )
        return Blog(github=github, db=db, settings=settings, source=parts.source)

    yield make
    for parts in made:
        parts.http.close()
    db.close()


@pytest.fixture
def blog(make_blog: Callable[..., Blog]) -> Blog:
    return make_blog()
