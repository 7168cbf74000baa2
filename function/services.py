"""The composition root: builds the app's collaborators from Settings, lazily, once each.

Nothing here runs at import. Tests pass their own collaborators (a fake invoker, a source on a
local GitHub stand-in, a store on MariaDB) instead of patching.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from function.aws.deadline import UNLIMITED, Deadline
from function.aws.invoker import LambdaInvoker, SelfInvoker, lambda_client_factory
from function.observability.metrics import MetricsSink
from function.observability.metrics import from_settings as metrics_from_settings
from function.settings import Settings

if TYPE_CHECKING:
    # For the types only: the accept path builds no source, store or worker, so its cold start loads
    # none of their modules (each is imported where it is first built).
    import peewee

    from function.assets.port import AssetStore
    from function.embeddings.port import EmbeddingProvider
    from function.embeddings.refresh import VectorRefresh
    from function.embeddings.status import VectorStatus
    from function.github.installations import InstallationState
    from function.hooks.after_sync import Later
    from function.hooks.alarm import AlarmNotifier
    from function.hooks.dispatch import HookDispatcher
    from function.hooks.wiring import HookParts
    from function.search.port import SemanticSearch
    from function.sources.port import ArticleSource
    from function.store.facade import PeeweeStore
    from function.worker.sync import SyncSummary, Worker

InstallationLookup = Callable[[int], "InstallationState | None"]


class Services:
    def __init__(
        self,
        settings: Settings,
        *,
        invoker: SelfInvoker | None = None,
        source: ArticleSource | None = None,
        database: peewee.Database | None = None,
        clock: Callable[[], datetime] | None = None,
        metrics: MetricsSink | None = None,
        installation_lookup: InstallationLookup | None = None,
        hook_parts: HookParts | None = None,
        asset_store: AssetStore | None = None,
        semantic_search: SemanticSearch | None = None,
        embedding_provider: EmbeddingProvider | None = None,
    ) -> None:
        self.settings = settings
        self._invoker = invoker
        self._source = source
        self._database = database
        self._clock = clock
        self._metrics = metrics
        self._lock = threading.Lock()
        self._installation_lookup = installation_lookup
        self._lookup_built = installation_lookup is not None
        self._hook_parts = hook_parts  # built on first use
        self._hook_parts_built = False
        self._asset_store = asset_store  # function.assets.port.AssetStore, built on first use
        self._schema_checked = False  # the database's schema version matched this code's once
        # Semantic search (EMBEDDING_PROVIDER): the provider and the process's vector cache, built on
        # first use; a provider passed in is used whatever the settings say.
        self._embedding_provider = embedding_provider
        self._embedding_built = embedding_provider is not None
        self._semantic_search = semantic_search  # built on first use when a provider is configured

    def invoker(self) -> SelfInvoker | None:
        """The self-invoker in Lambda mode; None in inline mode (no client is ever built)."""
        if not self.settings.lambda_mode:
            return None
        with self._lock:
            if self._invoker is None:
                proxy, no_proxy = self.settings.https_proxy, self.settings.no_proxy
                name = self.settings.lambda_function_name or ""
                self._invoker = LambdaInvoker(
                    name,
                    lambda: lambda_client_factory(proxy, no_proxy=no_proxy),
                    qualifier=self.settings.self_invoke_qualifier,
                )
            return self._invoker

    def after_restore(self) -> None:
        """Forget everything that holds a socket, after a SnapStart restore: the snapshot's connections
        (the self-invoke client's pool, the kept database connection, the alarm topic's client) point at
        peers that are long gone or, worse, shared by every environment restored from it. Each is built
        again on first use. Sources, invokers and webhook parts passed in are the caller's to manage."""
        with self._lock:
            if isinstance(self._invoker, LambdaInvoker):
                self._invoker = None
            if self._hook_parts_built:
                self._hook_parts, self._hook_parts_built = None, False
            database = self._database
        if database is not None and not database.is_closed():
            from function.store.connection import close_quietly

            close_quietly(database)

    def metrics(self) -> MetricsSink:
        """EMF metrics on Lambda, nothing in inline mode (built once)."""
        with self._lock:
            if self._metrics is None:
                self._metrics = metrics_from_settings(self.settings)
            return self._metrics

    def database(self) -> peewee.Database:
        """The Peewee database bound from DATABASE_URL (opened once; connections are per job)."""
        with self._lock:
            if self._database is None:
                from function.store.backends import open_database

                self._database = open_database(
                    self.settings.database_url,
                    max_connection_age_s=self.settings.database_max_connection_age_s,
                )
            return self._database

    @contextlib.contextmanager
    def store(self) -> Iterator[PeeweeStore]:
        """A store for one job: on a fresh connection closed when the block ends, or on the connection
        kept from this thread's last job (``Settings.keeps_database_connection``)."""
        from function.store.facade import job_store

        with job_store(self.database(), keep=self.settings.keeps_database_connection) as store:
            yield store

    def source(self) -> ArticleSource:
        with self._lock:
            if self._source is None:
                self._source = build_source(self.settings)
            return self._source

    def installation_lookup(self) -> InstallationLookup | None:
        """``GET /app/installations/{id}`` with the App's JWT (``function.github.installations``), or
        None when no GitHub App is configured (then installation events cannot be verified)."""
        with self._lock:
            if not self._lookup_built:
                self._lookup_built = True
                self._installation_lookup = build_installation_lookup(self.settings)
            return self._installation_lookup

    def worker(self, store: PeeweeStore) -> Worker:
        """The worker for one job on ``store``, once the database's schema is known to be this code's."""
        from zoneinfo import ZoneInfo

        from function.assets.wiring import asset_sync
        from function.worker.sync import Worker, utc_now

        self.require_current_schema(store)
        return Worker(
            store,
            self.source(),
            articles_dir=self.settings.articles_dir,
            allow_raw_html=self.settings.allow_raw_html,
            timezone=ZoneInfo(self.settings.article_timezone),
            asset_base_url=self.settings.asset_base_url,
            clock=self._clock or utc_now,
            assets=asset_sync(self.settings, store.db, self.asset_store(), self.source()),
            first_push_pins=self.settings.source_dir is not None,
            render_processes=self.settings.render_processes,
            mass_removal_fraction=self.settings.mass_removal_fraction,
            vectors=self.vector_refresh(store),
        )

    def embedding_provider(self) -> EmbeddingProvider | None:
        """The embedding provider of ``EMBEDDING_PROVIDER`` (``function.embeddings.wiring``), or
        None when semantic search is off. Built once; it connects on its first call."""
        with self._lock:
            if not self._embedding_built:
                from function.embeddings.wiring import provider_from_settings

                self._embedding_provider = provider_from_settings(self.settings)
                self._embedding_built = True
            return self._embedding_provider

    def vector_refresh(self, store: PeeweeStore) -> VectorRefresh | None:
        """The sync's embedding step on ``store``'s connection, or None without a provider."""
        provider = self.embedding_provider()
        if provider is None:
            return None
        from function.embeddings.refresh import VectorRefresh
        from function.store.embeddings import EmbeddingQueries
        from function.worker.sync import utc_now

        return VectorRefresh(provider, EmbeddingQueries(store.session), self._clock or utc_now)

    def vector_status(self, store: PeeweeStore, user_id: int | None = None) -> VectorStatus:
        """Semantic search's state for ``blog-api search status``: the provider and model, and the served
        articles still without current vectors (every user's, or ``user_id``'s). No provider call."""
        from function.embeddings.status import vector_status
        from function.store.embeddings import EmbeddingQueries

        return vector_status(
            self.settings.embedding_provider,
            self.embedding_provider(),
            EmbeddingQueries(store.session),
            user_id=user_id,
        )

    def semantic_search(self) -> SemanticSearch | None:
        """The semantic half of the search route; None when no embedding provider is configured (the
        route then searches lexically, and refuses semantic and hybrid modes). Built once: exact cosine
        search (``function.embeddings.vector_search``) with this process's vector cache, its queries on
        the calling thread's connection to the database."""
        provider = self.embedding_provider()
        if provider is None:
            return self._semantic_search
        database = self.database()
        with self._lock:
            if self._semantic_search is None:
                from function.embeddings.vector_search import ExactSemanticSearch, VectorCache
                from function.store.embeddings import EmbeddingQueries

                self._semantic_search = ExactSemanticSearch(
                    provider, EmbeddingQueries(database), VectorCache()
                )
            return self._semantic_search

    def require_current_schema(self, store: PeeweeStore) -> None:
        """Refuse a job on a database whose schema version is not this code's: newer (SchemaTooNew,
        permanent) or older (SchemaBehind, retryable: run ``blog-api migrate``). See
        ``function.store.migrations.require_current_schema``.

        One SELECT per process, on its first job: a match is remembered (a refusal is not, so the job
        after ``migrate`` passes). That is safe because the version changes only through ``migrate``,
        and ``migrate`` only moves it forward with steps that add (tables, columns, indexes, data): a
        process that saw its own version keeps working on what a later step adds, and a deploy of new
        code starts new processes, which check again."""
        if self._schema_checked:
            return
        from function.store.migrations.job_check import require_current_schema

        require_current_schema(store.db)
        self._schema_checked = True

    def asset_store(self) -> AssetStore:
        """Where the repository's images are stored (``function.assets.wiring.asset_store``)."""
        with self._lock:
            if self._asset_store is None:
                from function.assets.wiring import asset_store

                self._asset_store = asset_store(self.settings)
            return self._asset_store

    def hooks(self, store: PeeweeStore) -> HookDispatcher:
        """The outgoing webhooks' dispatcher on ``store``'s connection (``function.hooks``)."""
        from function.hooks.wiring import dispatcher, parts_from_settings

        with self._lock:
            if self._hook_parts is None:
                self._hook_parts, self._hook_parts_built = parts_from_settings(self.settings), True
            parts = self._hook_parts
        return dispatcher(parts, store.hooks, self.settings.site_url)

    def alarm(self) -> AlarmNotifier:
        """The stack's alarm topic (``ALARM_TOPIC_ARN``), or the log without one: told when a sync is held
        or a front end's endpoint is disabled."""
        from function.hooks.wiring import parts_from_settings

        with self._lock:
            if self._hook_parts is None:
                self._hook_parts, self._hook_parts_built = parts_from_settings(self.settings), True
            return self._hook_parts.alarm

    def after_sync(
        self,
        outcome: SyncSummary | BaseException,
        *,
        installation_id: int | None = None,
        user_name: str | None = None,
        delivery: str | None = None,
        deadline: Deadline = UNLIMITED,
        later: Later | None = None,
    ) -> list[str]:
        """Tell the user's webhook endpoints what a finished sync changed, or that it failed
        (``function.hooks.after_sync``); the endpoints told. Never raises. ``later``: when the sending
        runs (now by default)."""
        from function.hooks.after_sync import after_sync, run_now

        return after_sync(
            self,
            outcome,
            installation_id=installation_id,
            user_name=user_name,
            delivery=delivery,
            deadline=deadline,
            later=later or run_now,
        )


def build_source(settings: Settings) -> ArticleSource:
    """The article source named by ARTICLE_SOURCE."""
    folder = settings.source_dir
    if folder is not None:
        from function.sources.folder import DirectorySource

        return DirectorySource(Path(folder), settings.articles_dir)

    from function.github.app_auth import GitHubAppAuth
    from function.github.http import HttpClient
    from function.sources.github import GitHubSource

    # The same check (and one-line message) as at start-up, for settings that were built without it.
    settings.check_source()
    assert settings.github_app_id and settings.github_private_key  # check_source refused otherwise
    http = HttpClient(https_proxy=settings.https_proxy, no_proxy=settings.no_proxy)
    auth = GitHubAppAuth(settings.github_app_id, settings.github_private_key, settings.github_api_url, http)
    return GitHubSource(auth, http, settings.github_api_url, articles_dir=settings.articles_dir)


def build_installation_lookup(settings: Settings) -> InstallationLookup | None:
    """Asks GitHub for an installation's current state; None without App credentials."""
    if not settings.github_app_id or not settings.github_private_key:
        return None
    from function.github.app_auth import GitHubAppAuth
    from function.github.http import HttpClient
    from function.github.installations import InstallationLookup

    http = HttpClient(https_proxy=settings.https_proxy, no_proxy=settings.no_proxy)
    auth = GitHubAppAuth(settings.github_app_id, settings.github_private_key, settings.github_api_url, http)
    return InstallationLookup(auth, http)
