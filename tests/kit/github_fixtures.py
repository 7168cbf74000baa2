"""pytest fixtures (and plain helpers for scripts) around the GitHub stand-in.

Import the fixtures into a ``conftest.py``::

    from tests.kit.github_fixtures import github, github_app_key, github_repo, make_github_source

``build_github_source`` and ``generate_app_key`` work without pytest (the benchmark uses them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from function.github.app_auth import GitHubAppAuth
from function.github.http import HttpClient
from function.sources.github import GitHubSource
from function.sources.port import RepoRef
from tests.kit.github_standin import GitHubStandIn

APP_ID = 12345
INSTALLATION_ID = 1
REPO = "octo/blog"


@dataclass(frozen=True)
class AppKey:
    """A GitHub App key pair: the PEM the App signs with, and the public key GitHub verifies with."""

    private_pem: str
    public_key: Any


def generate_app_key() -> AppKey:
    """A fresh 2048-bit RSA key (about 50 ms; the fixture makes one per test session)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return AppKey(private_pem=pem, public_key=key.public_key())


@dataclass
class GitHubClientParts:
    """What ``build_github_source`` made, so a caller can inspect or close it."""

    source: GitHubSource
    auth: GitHubAppAuth
    http: HttpClient


def build_github_source(
    standin: GitHubStandIn,
    key: AppKey,
    *,
    clock: Callable[[], float] = time.time,
    http: HttpClient | None = None,
    http_options: dict[str, Any] | None = None,
    **source_options: Any,
) -> GitHubClientParts:
    """A GitHubSource (with its auth and HTTP client) pointed at ``standin``.

    The default HTTP client has short time-outs and back-off so fault tests stay fast: connect 1 s,
    read 2 s, 3 attempts, back-off factor 0.05, Retry-After capped at 2 s."""
    options: dict[str, Any] = {
        "connect_timeout": 1.0,
        "read_timeout": 2.0,
        "attempts": 3,
        "backoff_factor": 0.05,
        "retry_after_max": 2.0,
    }
    options.update(http_options or {})
    client = http or HttpClient(**options)
    auth = GitHubAppAuth(standin.app_id, key.private_pem, standin.url, client, clock=clock)
    source = GitHubSource(auth, client, standin.url, **source_options)
    return GitHubClientParts(source=source, auth=auth, http=client)


@pytest.fixture(scope="session")
def github_app_key() -> AppKey:
    return generate_app_key()


@pytest.fixture
def github(github_app_key: AppKey) -> Iterator[GitHubStandIn]:
    """A running stand-in knowing the test App (``APP_ID``) and installation ``INSTALLATION_ID``."""
    with GitHubStandIn(
        app_id=APP_ID, app_public_key=github_app_key.public_key, installations={INSTALLATION_ID}
    ) as standin:
        yield standin


@pytest.fixture
def github_repo() -> RepoRef:
    """The test repository on its default branch, through the test installation."""
    return RepoRef(full_name=REPO, branch=None, installation_id=INSTALLATION_ID)


@pytest.fixture
def make_github_source(
    github: GitHubStandIn, github_app_key: AppKey
) -> Iterator[Callable[..., GitHubClientParts]]:
    """A factory: ``make_github_source(clock=..., http_options={...}, max_workers=...)``; every HTTP
    client it builds is closed after the test."""
    made: list[GitHubClientParts] = []

    def make(**options: Any) -> GitHubClientParts:
        parts = build_github_source(github, github_app_key, **options)
        made.append(parts)
        return parts

    yield make
    for parts in made:
        parts.http.close()
