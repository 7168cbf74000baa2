"""The GitHub App's hook-deliveries API: list the App's webhook deliveries and redeliver one (with the
App's JWT). The redelivery sweep (``function.worker.redelivery``) decides what to redeliver."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from function.errors import (
    GitHubAuthError,
    HttpError,
    RedeliveryNotConfigured,
    RedeliveryRefused,
    SourceUnavailable,
)
from function.github.app_auth import API_VERSION, GITHUB_JSON, GitHubAppAuth
from function.github.http import HttpClient

log = logging.getLogger(__name__)

PER_PAGE = 100
# GitHub's status for an attempt that got a 2xx answer; anything else is a failure (the doc's rule).
STATUS_OK = "OK"
# GitHub's ``status_code`` for an attempt that never got an answer (time-out, connection refused): 0.
NO_ANSWER = 0
# The answer API Gateway gives a request over Lambda's 6 MB synchronous payload limit.
TOO_LARGE = 413


@dataclass(frozen=True)
class HookDelivery:
    """One attempt, as ``GET /app/hook/deliveries`` lists it."""

    id: int
    guid: str
    delivered_at: datetime  # aware, UTC
    status: str
    status_code: int
    event: str
    action: str | None = None
    redelivery: bool = False

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    @property
    def never_reached_us(self) -> bool:
        """A push GitHub could not hand over: too large for Lambda (413), or no answer at all. A
        redelivery sends the same bytes and fails the same way."""
        return self.event == "push" and self.status_code in (TOO_LARGE, NO_ANSWER) and not self.ok

    @classmethod
    def from_json(cls, data: Any) -> HookDelivery:
        try:
            delivered = datetime.fromisoformat(str(data["delivered_at"]).replace("Z", "+00:00"))
            return cls(
                id=int(data["id"]),
                guid=str(data["guid"]),
                delivered_at=delivered if delivered.tzinfo else delivered.replace(tzinfo=UTC),
                status=str(data.get("status") or ""),
                status_code=int(data.get("status_code") or 0),
                event=str(data.get("event") or ""),
                action=data.get("action"),
                redelivery=bool(data.get("redelivery")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SourceUnavailable(f"unreadable hook delivery from GitHub: {type(exc).__name__}") from None


@dataclass(frozen=True)
class Page:
    deliveries: list[HookDelivery]
    next_cursor: str | None


class HookDeliveriesApi(Protocol):
    """The two GitHub calls the sweep makes (a fake records them in tests)."""

    def list_deliveries(self, cursor: str | None) -> Page:
        """One page, newest first; ``next_cursor`` is None on the last page."""

    def redeliver(self, delivery_id: int) -> None:
        """Ask GitHub to deliver this attempt again; raises RedeliveryRefused when GitHub says no."""

    def request_payload(self, delivery_id: int) -> Any:
        """The JSON payload GitHub sent in this attempt (``GET /app/hook/deliveries/{id}``'s
        ``request.payload``); raises SourceUnavailable when it cannot be read."""


class GitHubHookDeliveries:
    """``HookDeliveriesApi`` on GitHub's REST API, authenticated with the App's JWT."""

    def __init__(self, auth: Any, http: HttpClient, api_url: str, *, per_page: int = PER_PAGE) -> None:
        self._auth = auth  # GitHubAppAuth: app_jwt()
        self._http = http
        self._api_url = api_url.rstrip("/")
        self._per_page = per_page

    def _headers(self) -> dict[str, str]:

        return {
            "Authorization": f"Bearer {self._auth.app_jwt()}",
            "Accept": GITHUB_JSON,
            "X-GitHub-Api-Version": API_VERSION,
        }

    def list_deliveries(self, cursor: str | None) -> Page:
        url = f"{self._api_url}/app/hook/deliveries?per_page={self._per_page}"
        if cursor:
            url += f"&cursor={cursor}"

        try:
            answer = self._http.request("GET", url, headers=self._headers())
        except HttpError as exc:
            raise SourceUnavailable(f"listing App hook deliveries: {exc}") from None
        _raise_for_status(answer.status, "listing App hook deliveries")
        try:
            items = json.loads(answer.body)
        except ValueError:
            raise SourceUnavailable("listing App hook deliveries: the answer is not JSON") from None
        if not isinstance(items, list):
            raise SourceUnavailable("listing App hook deliveries: the answer is not a list")
        return Page([HookDelivery.from_json(item) for item in items], next_cursor(answer.headers.get("Link")))

    def redeliver(self, delivery_id: int) -> None:
        url = f"{self._api_url}/app/hook/deliveries/{int(delivery_id)}/attempts"

        try:
            answer = self._http.request("POST", url, headers=self._headers())
        except HttpError as exc:
            raise RedeliveryRefused(str(exc)) from None
        if answer.status not in (200, 202):
            raise RedeliveryRefused(f"GitHub answered {answer.status}: {_message(answer.body)}")

    def request_payload(self, delivery_id: int) -> Any:
        url = f"{self._api_url}/app/hook/deliveries/{int(delivery_id)}"
        what = f"reading App hook delivery {int(delivery_id)}"
        try:
            answer = self._http.request("GET", url, headers=self._headers())
        except HttpError as exc:
            raise SourceUnavailable(f"{what}: {exc}") from None
        _raise_for_status(answer.status, what)
        try:
            request = json.loads(answer.body).get("request") or {}
            payload = request.get("payload")
            # Documented as an object; a payload sent form-encoded or stored as text comes as a string.
            return json.loads(payload) if isinstance(payload, str) else payload
        except (ValueError, AttributeError):
            raise SourceUnavailable(f"{what}: the answer holds no JSON request payload") from None


def _message(body: bytes) -> str:
    try:
        return str(json.loads(body).get("message", ""))[:200]
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")


def _raise_for_status(status: int, what: str) -> None:

    if status == 200:
        return
    if status >= 500 or status == 429:
        raise SourceUnavailable(f"{what}: GitHub answered {status}")
    raise GitHubAuthError(f"{what}: GitHub answered {status}")


def next_cursor(link_header: str | None) -> str | None:
    """The ``cursor`` of the ``rel="next"`` URL in a Link header (GitHub paginates deliveries by cursor)."""
    for part in (link_header or "").split(","):
        url, _, params = part.partition(";")
        if 'rel="next"' in params.replace(" ", ""):
            query = parse_qs(urlsplit(url.strip().strip("<>")).query)
            values = query.get("cursor")
            return values[0] if values else None
    return None


def fetch_since(api: HookDeliveriesApi, since: datetime) -> tuple[list[HookDelivery], int]:
    """Every attempt delivered at or after ``since`` (newest first) and the number of pages read. Stops
    at the first page that reaches back past ``since``: the list is newest first."""
    found: list[HookDelivery] = []
    pages = 0
    cursor: str | None = None
    while True:
        page = api.list_deliveries(cursor)
        pages += 1
        found.extend(d for d in page.deliveries if d.delivered_at >= since)
        reached_back = any(d.delivered_at < since for d in page.deliveries)
        if reached_back or not page.deliveries or page.next_cursor is None:
            return found, pages
        cursor = page.next_cursor


def api_from_settings(settings: Any) -> tuple[GitHubHookDeliveries, HttpClient]:
    """The real API client (and its HTTP client, for the caller to close) from Settings."""
    from function.github.http import HttpClient

    if not settings.github_app_id or not settings.github_private_key:
        raise RedeliveryNotConfigured(
            "redelivery needs GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY (or _PARAM): "
            "the App's deliveries are listed with its JWT"
        )
    http = HttpClient(https_proxy=settings.https_proxy, no_proxy=settings.no_proxy)
    auth = GitHubAppAuth(settings.github_app_id, settings.github_private_key, settings.github_api_url, http)
    return GitHubHookDeliveries(auth, http, settings.github_api_url), http
