"""SnapStart's restore hook: clients built before the snapshot are built again after it."""

from __future__ import annotations

from function import handler
from function.app import create_app
from function.services import Services
from function.settings import Settings
from tests.kit.deliveries import SECRET


def lambda_services() -> Services:
    return Services(Settings(webhook_secret=SECRET, lambda_function_name="d-st-blog-api"))


def test_the_self_invoker_is_built_again_after_a_restore() -> None:
    services = lambda_services()
    before = services.invoker()
    assert services.invoker() is before  # built once per environment
    services.after_restore()
    assert services.invoker() is not before


def test_the_handler_hook_reaches_the_apps_services() -> None:
    services = lambda_services()
    app = create_app(services=services)
    before = services.invoker()
    saved = handler._app
    handler._app = app
    try:
        handler.after_restore()
    finally:
        handler._app = saved
    assert services.invoker() is not before


def test_the_hook_is_harmless_before_the_first_event() -> None:
    saved = handler._app
    handler._app = None
    try:
        handler.after_restore()  # nothing built yet: nothing to drop
    finally:
        handler._app = saved
