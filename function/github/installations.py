"""GitHub's own word on an App installation: ``GET /app/installations/{id}`` with the App's JWT.

An installation event says what was true when GitHub sent it; a replayed or late one says something
old. Before a user's installation link changes, this asks GitHub what is true now.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from function.errors import GitHubAuthError, HttpError, SourceUnavailable
from function.github.app_auth import API_VERSION, GITHUB_JSON, GitHubAppAuth, is_rate_limited
from function.github.http import HttpClient


@dataclass(frozen=True)
class InstallationState:
    """An installation as GitHub has it now."""

    installation_id: int
    login: str | None  # the account it is installed on
    suspended: bool
    account_id: int | None = None  # that account's numeric id, which a rename keeps


class InstallationLookup:
    def __init__(self, auth: GitHubAppAuth, http: HttpClient) -> None:
        self._auth = auth
        self._http = http

    def __call__(self, installation_id: int) -> InstallationState | None:
        """The installation, or None when GitHub says it does not exist (404: uninstalled).

        Raises ``SourceUnavailable`` (5xx, rate limit, no answer: worth a retry) or ``GitHubAuthError``
        (GitHub refused the App's JWT: a configuration problem)."""
        url = f"{self._auth.api_url}/app/installations/{int(installation_id)}"
        headers = {
            "Authorization": f"Bearer {self._auth.app_jwt()}",
            "Accept": GITHUB_JSON,
            "X-GitHub-Api-Version": API_VERSION,
        }
        what = f"installation {installation_id}"
        try:
            response = self._http.request("GET", url, headers=headers)
        except HttpError as exc:
            raise SourceUnavailable(f"{what}: {exc}") from None
        if response.status == 404:
            return None
        if response.status >= 500 or response.status == 429 or is_rate_limited(response.headers):
            raise SourceUnavailable(f"{what}: GitHub answered {response.status}")
        if response.status != 200:
            raise GitHubAuthError(f"{what}: GitHub answered {response.status}")
        try:
            data = json.loads(response.body)
            account = data.get("account") or {}
            login = account.get("login")
            account_id = account.get("id")
            suspended = data.get("suspended_at") is not None
        except (ValueError, AttributeError):
            raise SourceUnavailable(f"{what}: unreadable answer from GitHub") from None
        return InstallationState(
            installation_id,
            login if isinstance(login, str) else None,
            suspended,
            account_id if isinstance(account_id, int) and not isinstance(account_id, bool) else None,
        )
