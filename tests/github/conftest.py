"""Fixtures for the GitHub App source tests: the stand-in, the App key and source factories."""

from tests.support.github_fixtures import (  # noqa: F401  (pytest finds fixtures by name)
    github,
    github_app_key,
    github_repo,
    make_github_source,
)
