"""GitHub App authentication: the App's JWT and cached installation access tokens.

The private key and the tokens never appear in an exception message or a log line: messages name the
App id, the installation id and the HTTP status only.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from function.errors import GitHubAuthError, HttpError, InstallationNotFound, SourceUnavailable
from function.github.http import HttpClient

logger = logging.getLogger(__name__)

GITHUB_JSON = "application/vnd.github+json"
API_VERSION = "2022-11-28"
# GitHub refuses a JWT whose exp is more than 10 minutes ahead; iat is backdated for clock drift.
JWT_BACKDATE_SECONDS = 60
JWT_LIFETIME_SECONDS = 540
# A token is renewed this long before GitHub's expires_at, so a long sync never holds an expiring one.
TOKEN_REFRESH_MARGIN_SECONDS = 300


@dataclass(frozen=True)
class _CachedToken:
    token: str
    expires_at: float  # epoch seconds


class GitHubAppAuth:
    """Signs App JWTs and hands out installation tokens, cached per installation until 5 minutes
    before they expire. Safe to share between threads: concurrent callers get one token request."""

    def __init__(
        self,
        app_id: int | str,
        private_key_pem: str | bytes,
        api_url: str,
        http: HttpClient,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app_id = str(app_id)
        self._private_key_pem = (
            private_key_pem.encode() if isinstance(private_key_pem, str) else private_key_pem
        )
        self._private_key: Any = None
        self.api_url = api_url.rstrip("/")
        self.http = http
        self.clock = clock
        self._token_cache: dict[int, _CachedToken] = {}
        # One lock for all installations: a worker serves one installation at a time, and holding the
        # lock across the request is what makes concurrent callers share one token request.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GitHubAppAuth(app_id={self.app_id!r}, api_url={self.api_url!r})"

    def _key(self) -> Any:
        if self._private_key is None:
            try:
                self._private_key = load_pem_private_key(self._private_key_pem, password=None)
            except (ValueError, TypeError):
                # The library's message could quote the input; ours names nothing secret.
                raise GitHubAuthError(
                    f"the private key of GitHub App {self.app_id} is not a valid unencrypted PEM key"
                ) from None
        return self._private_key

    def app_jwt(self) -> str:
        """A fresh RS256 JWT for the App: ``iat`` = now - 60 s, ``exp`` = now + 540 s, ``iss`` = App id."""
        now = int(self.clock())
        claims = {"iat": now - JWT_BACKDATE_SECONDS, "exp": now + JWT_LIFETIME_SECONDS, "iss": self.app_id}
        return jwt.encode(claims, self._key(), algorithm="RS256")

    def installation_token(self, installation_id: int) -> str:
        """An installation access token, from the cache unless it expires within 5 minutes.

        Raises ``InstallationNotFound`` (404), ``GitHubAuthError`` (other refusals) or
        ``SourceUnavailable`` (5xx, rate limit or no answer after the HTTP client's retries).
        """
        with self._lock:
            cached = self._token_cache.get(installation_id)
            if cached is not None and self.clock() < cached.expires_at - TOKEN_REFRESH_MARGIN_SECONDS:
                return cached.token
            fresh = self._request_token(installation_id)
            self._token_cache[installation_id] = fresh
            logger.debug("GitHub installation token issued", extra={"installation_id": installation_id})
            return fresh.token

    def invalidate(self, installation_id: int, token: str | None = None) -> None:
        """Forget the cached token (GitHub answered 401 with it: revoked). With ``token``, only if it is
        still the cached one, so a token another thread just renewed is kept."""
        with self._lock:
            cached = self._token_cache.get(installation_id)
            if cached is not None and (token is None or cached.token == token):
                del self._token_cache[installation_id]

    def _request_token(self, installation_id: int) -> _CachedToken:
        url = f"{self.api_url}/app/installations/{int(installation_id)}/access_tokens"
        headers = {
            "Authorization": f"Bearer {self.app_jwt()}",
            "Accept": GITHUB_JSON,
            "X-GitHub-Api-Version": API_VERSION,
        }
        try:
            response = self.http.request("POST", url, headers=headers)
        except HttpError as exc:
            raise SourceUnavailable(f"installation token for {installation_id}: {exc}") from None
        status = response.status
        if status == 201 or status == 200:
            return self._parse_token(installation_id, response.body)
        what = f"installation token for {installation_id}: GitHub answered {status}"
        if status == 404:
            raise InstallationNotFound(installation_id)
        if status >= 500 or status == 429 or is_rate_limited(response.headers):
            raise SourceUnavailable(what)
        raise GitHubAuthError(what)

    def _parse_token(self, installation_id: int, body: bytes) -> _CachedToken:
        try:
            data = json.loads(body)
            token = data["token"]
            expires_at = datetime.fromisoformat(data["expires_at"].replace("Z", "+00:00")).timestamp()
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SourceUnavailable(
                f"installation token for {installation_id}: unreadable answer from GitHub"
            ) from None
        if not isinstance(token, str) or not token:
            raise SourceUnavailable(f"installation token for {installation_id}: answer without a token")
        return _CachedToken(token=token, expires_at=expires_at)


def is_rate_limited(headers: Any) -> bool:
    """GitHub's primary rate limit answers 403 with ``x-ratelimit-remaining: 0``: wait, don't give up."""
    return headers.get("x-ratelimit-remaining") == "0" or headers.get("retry-after") is not None
