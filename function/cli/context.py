"""What every ``blog-api`` command is handed: the app's services, built from the environment on first use."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from function.cli.failures import missing_sqlite_file
from function.errors import ConfigError
from function.services import Services
from function.settings import Settings
from function.store.url import DatabaseTarget, parse_database_url
from shared.runtime_settings import declaration


class Context:
    """Builds Services from the environment on first use, so ``--help`` needs no settings."""

    def __init__(self) -> None:
        self._services: Services | None = None

    def services(self, *, require_secret: bool = False) -> Services:
        if self._services is None:
            self._services = Services(Settings.from_env(require_secret=require_secret))
        return self._services

    def secrets(self) -> list[str]:
        """The configured secret values, once the settings were read (for redacting what is printed)."""
        return self._services.settings.secrets() if self._services is not None else []

    def database_target(self) -> DatabaseTarget | None:
        """What DATABASE_URL names, once the settings were read (for error lines); else None."""
        if self._services is None:
            return None
        return parse_database_url(self._services.settings.database_url)

    def existing_database(self) -> Any:
        """The database, which must exist: a command that reads or changes data never creates one
        (SQLite would, silently, wherever the command runs); ``init-db`` is what creates it."""
        services = self.services()
        url = declaration("database_url")
        url_is_default = not (os.environ.get(url.env) or (url.param and os.environ.get(url.param.env)))
        target = parse_database_url(services.settings.database_url)
        missing = missing_sqlite_file(target, url_is_default=url_is_default)
        if missing:
            raise ConfigError(missing)
        return services.database()

    @contextmanager
    def store(self) -> Iterator[Any]:
        """A store on a fresh connection to the existing database (``existing_database``)."""
        self.existing_database()
        with self.services().store() as store:
            yield store


pass_context = click.make_pass_decorator(Context, ensure=True)
