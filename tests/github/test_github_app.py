"""GitHub App auth against the stand-in: JWT shape, token cache and refresh, failures without secrets."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import jwt
import pytest

from function.errors import GitHubAuthError, InstallationNotFound, SourcePermanentError, SourceUnavailable
from function.github.app_auth import GitHubAppAuth
from function.github.http import HttpClient
from tests.kit.github_fixtures import (
    APP_ID,
    INSTALLATION_ID,
    AppKey,
    GitHubClientParts,
    generate_app_key,
)
from tests.kit.github_standin import GitHubStandIn

MakeSource = Callable[..., GitHubClientParts]


class FakeClock:
    """A clock both the client and the stand-in read, moved by the test."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_app_jwt_is_rs256_with_iss_and_a_nine_minute_window(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    auth = make_github_source().auth

    auth.installation_token(INSTALLATION_ID)

    # The stand-in verified the signature with the App's public key and recorded the claims.
    assert len(github.jwt_claims) == 1
    claims = github.jwt_claims[0]
    assert claims["iss"] == str(APP_ID)
    assert claims["exp"] - claims["iat"] == 600
    assert claims["iat"] <= time.time() - 59
    assert jwt.get_unverified_header(auth.app_jwt())["alg"] == "RS256"


def test_jwt_signed_with_another_key_is_refused(github: GitHubStandIn) -> None:
    # GIVEN an App whose private key is not the one GitHub knows
    other = generate_app_key()
    with HttpClient(attempts=1) as http:
        auth = GitHubAppAuth(APP_ID, other.private_pem, github.url, http)

        # WHEN it asks for a token THEN the refusal is a permanent auth error
        with pytest.raises(GitHubAuthError) as raised:
            auth.installation_token(INSTALLATION_ID)

    assert "401" in str(raised.value)
    assert github.count("token") == 1


def test_token_is_cached_one_request_for_many_calls(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    auth = make_github_source().auth

    tokens = {auth.installation_token(INSTALLATION_ID) for _ in range(20)}

    assert len(tokens) == 1
    assert github.count("token") == 1


def test_concurrent_callers_share_one_token_request(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    auth = make_github_source().auth
    github.latency = 0.05  # widen the window in which the callers overlap
    tokens: list[str] = []

    def call() -> None:
        tokens.append(auth.installation_token(INSTALLATION_ID))

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(set(tokens)) == 1
    assert github.count("token") == 1


def test_token_is_renewed_five_minutes_before_it_expires(
    github_app_key: AppKey, make_github_source: MakeSource
) -> None:
    # GIVEN a client and a stand-in that share a clock; tokens live one hour
    clock = FakeClock()
    with GitHubStandIn(
        app_id=APP_ID, app_public_key=github_app_key.public_key, installations={1}, clock=clock
    ) as standin:
        with HttpClient(attempts=1) as http:
            auth = GitHubAppAuth(APP_ID, github_app_key.private_pem, standin.url, http, clock=clock)
            first = auth.installation_token(1)

            # WHEN time moves to just over 5 minutes before expiry, THEN the cached token is still used
            clock.advance(3600 - 301)
            assert auth.installation_token(1) == first

            # WHEN it moves inside the 5-minute margin, THEN a new token is fetched with a fresh JWT
            clock.advance(2)
            second = auth.installation_token(1)

    assert second != first
    assert standin.count("token") == 2


def test_unknown_installation_is_installation_not_found_and_permanent(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    auth = make_github_source().auth

    with pytest.raises(InstallationNotFound) as raised:
        auth.installation_token(999)

    assert raised.value.installation_id == 999
    assert isinstance(raised.value, SourcePermanentError)


def test_token_endpoint_5xx_after_retries_is_source_unavailable(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.fail(f"/app/installations/{INSTALLATION_ID}/access_tokens", 502, times=None)
    auth = make_github_source().auth

    with pytest.raises(SourceUnavailable):
        auth.installation_token(INSTALLATION_ID)
    assert github.count("token") == 3  # the test client's attempts


def test_invalid_private_key_error_does_not_quote_the_key(github: GitHubStandIn) -> None:
    secret_pem = "-----BEGIN PRIVATE KEY-----\nTOPSECRETMATERIAL\n-----END PRIVATE KEY-----\n"
    with HttpClient(attempts=1) as http:
        auth = GitHubAppAuth(APP_ID, secret_pem, github.url, http)

        with pytest.raises(GitHubAuthError) as raised:
            auth.installation_token(INSTALLATION_ID)

    assert "TOPSECRETMATERIAL" not in str(raised.value)
    assert "TOPSECRETMATERIAL" not in repr(auth)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_tokens_and_key_never_reach_logs_or_errors(
    github: GitHubStandIn,
    github_app_key: AppKey,
    make_github_source: MakeSource,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN debug logging and a failure after a token was issued
    caplog.set_level("DEBUG")
    auth = make_github_source().auth
    token = auth.installation_token(INSTALLATION_ID)
    auth.invalidate(INSTALLATION_ID)
    github.fail(f"/app/installations/{INSTALLATION_ID}/access_tokens", 500, times=None)

    # WHEN the renewal fails
    with pytest.raises(SourceUnavailable) as raised:
        auth.installation_token(INSTALLATION_ID)

    # THEN neither the token, the JWT nor the key appears anywhere
    text = caplog.text + str(raised.value)
    key_body = github_app_key.private_pem.splitlines()[1]
    assert token not in text
    assert key_body not in text
    assert "Bearer" not in text
