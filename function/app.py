"""The Flask application factory: ``flask --app function.app run`` serves ``create_app()``."""

from __future__ import annotations

from typing import Any

from flask import Flask

from function.api import asset_routes, book_routes, health, http_errors, read_routes, static_routes
from function.errors import ConfigError
from function.events import route as events_route
from function.observability.logs import configure_logging
from function.receiver import webhook_route
from function.services import Services
from function.settings import Settings

# GitHub caps a delivery at 25 MB; leave room for form encoding.
MAX_DELIVERY_BYTES = 30 * 1024 * 1024


def create_app(
    settings: Settings | None = None, *, services: Services | None = None, **overrides: Any
) -> Flask:
    """Build the app. Settings come from the environment unless given; collaborators may be passed
    (``services``, or ``invoker=``/``source=``/``database=``/``clock=`` overrides) instead of built.

    Raises ConfigError (and so refuses to start) without a webhook secret, or with a setting missing
    for the article source (``Settings.check_source``), or malformed.
    """
    if services is None:
        services = Services(settings or _settings_from_environment(), **overrides)
    settings = services.settings
    configure_logging(settings.log_level, settings.secrets(), library_level=settings.library_log_level)

    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_DELIVERY_BYTES
    app.config["JSON_SORT_KEYS"] = False
    # Flask would answer OPTIONS itself with an empty HTML 200; only the read routes answer OPTIONS (a
    # CORS preflight from a listed origin), everywhere else it gets the JSON 405 (with Allow) like any
    # other method a route does not serve.
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    app.json.sort_keys = False  # type: ignore[attr-defined]
    # UTF-8 as it is: Japanese text escaped as \uXXXX takes about 1.5 times the bytes.
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.extensions["blog_api"] = services
    # Werkzeug answers a path with "//" by a 308 whose body is an HTML page, before any error handler
    # runs; without merging, such a path is simply unknown: a JSON 404 like every other bad URL.
    app.url_map.merge_slashes = False

    http_errors.init_app(app)
    app.register_blueprint(health.blueprint)
    app.register_blueprint(webhook_route.blueprint)
    app.register_blueprint(events_route.make_blueprint(settings.pass_through_path))
    app.register_blueprint(read_routes.blueprint)
    app.register_blueprint(book_routes.blueprint)
    app.register_blueprint(static_routes.blueprint)
    app.register_blueprint(asset_routes.blueprint)
    return app


def _settings_from_environment() -> Settings:
    """The start-up checks on the environment. Under a command line (``flask --app function.app run``,
    whose click context is active) a refusal is one line and exit 1, as for ``blog-api``, instead of a
    traceback; elsewhere (Lambda, tests) the ConfigError itself is raised."""
    try:
        return Settings.from_env(require_source=True)
    except ConfigError as exc:
        import click

        if click.get_current_context(silent=True) is None:
            raise
        raise click.ClickException(str(exc)) from None
