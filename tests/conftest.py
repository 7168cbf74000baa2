"""Fixtures shared by the whole suite: app → client, for Lambda and inline modes."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import hypothesis
import pytest
from flask import Flask
from flask.testing import FlaskClient

from function.app import create_app
from function.settings import Settings
from tests.kit.deliveries import SECRET
from tests.kit.fakes import RecordingInvoker

pytest_plugins = [
    "tests.kit.db_fixtures",
    "tests.kit.github_fixtures",
    "tests.kit.blog_fixtures",
    "tests.kit.ops_fixtures",
]

FUNCTION_NAME = "d-st-blog-api"

# Property tests explore new inputs on every local run. CI (.ci/run sets HYPOTHESIS_PROFILE=ci) draws the
# same inputs every run, so a random draw can never block a landing. Loaded before the test modules are
# imported: the settings they build take what they leave unset from this profile.
hypothesis.settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def make_settings(tmp_path: Any) -> Callable[..., Settings]:
    """Explicit settings for a test: Lambda mode unless ``lambda_function_name=None``."""

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "webhook_secret": SECRET,
            "lambda_function_name": FUNCTION_NAME,
            "database_url": f"sqlite:///{tmp_path}/blog.db",
            "article_source": f"dir:{tmp_path}/repo",
            "article_branch": None,
        }
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def invoker() -> RecordingInvoker:
    return RecordingInvoker()


@pytest.fixture
def lambda_app(make_settings: Callable[..., Settings], invoker: RecordingInvoker) -> Flask:
    """The app in accept-and-invoke mode with a recording invoker."""
    return create_app(make_settings(), invoker=invoker)


@pytest.fixture
def lambda_client(lambda_app: Flask) -> FlaskClient:
    return lambda_app.test_client()
