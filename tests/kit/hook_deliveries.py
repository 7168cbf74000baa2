"""GitHub's App hook-deliveries API on the GitHub stand-in (added through its ``add_route``).

``GET /app/hook/deliveries?per_page=&cursor=`` lists attempts newest first with a ``Link: rel="next"``
cursor, as GitHub does; ``GET /app/hook/deliveries/{id}`` gives one attempt with its ``request``
(headers and JSON payload) and ``response``; ``POST /app/hook/deliveries/{id}/attempts`` records a
redelivery and answers 202.
Both need the App's JWT, checked by the stand-in.
"""

from __future__ import annotations

import itertools
import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.kit.github_standin import (
    GitHubStandIn,
    StandInRequest,
    StandInResponse,
    json_response,
    message_response,
)

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def failure_status(code: int) -> str:
    return "OK" if 200 <= code < 300 else f"Invalid HTTP Response: {code}"


@dataclass
class HookDeliveries:
    """The App's delivery history, and what the client asked of it."""

    standin: GitHubStandIn
    history: list[dict[str, Any]] = field(default_factory=list)
    redelivered: list[int] = field(default_factory=list)
    refuse: set[int] = field(default_factory=set)  # attempt ids whose redelivery is answered 422
    payloads: dict[int, Any] = field(default_factory=dict)  # attempt id -> the request payload sent
    _ids: Any = field(default_factory=lambda: itertools.count(1000))
    _lock: Any = field(default_factory=threading.Lock)

    def install(self) -> HookDeliveries:
        self.standin.add_route("GET", r"/app/hook/deliveries", self._list, kind="hook_deliveries", auth="app")
        self.standin.add_route(
            "POST", r"/app/hook/deliveries/(?P<id>\d+)/attempts", self._attempt, kind="redeliver", auth="app"
        )
        self.standin.add_route(
            "GET", r"/app/hook/deliveries/(?P<id>\d+)", self._one, kind="hook_delivery", auth="app"
        )
        return self

    def add(
        self,
        *,
        guid: str | None = None,
        status_code: int = 200,
        at: datetime = NOW,
        event: str = "push",
        redelivery: bool = False,
        status: str | None = None,
        payload: Any = None,
    ) -> dict[str, Any]:
        """Record one attempt; ids grow with each call, as GitHub's do."""
        with self._lock:
            item = {
                "id": next(self._ids),
                "guid": guid or str(uuid.uuid4()),
                "delivered_at": at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "redelivery": redelivery,
                "duration": 0.1,
                "status": status or failure_status(status_code),
                "status_code": status_code,
                "event": event,
                "action": None,
                "installation_id": 1,
                "repository_id": 7,
                "throttled_at": None,
            }
            self.history.append(item)
            if payload is not None:
                self.payloads[item["id"]] = payload
                repository = payload.get("repository") or {}
                item["repository_id"] = repository.get("id")
                item["installation_id"] = (payload.get("installation") or {}).get("id")
        return item

    def add_many(self, n: int, *, start: datetime = NOW, step: timedelta = timedelta(minutes=-1)) -> None:
        """``n`` successful attempts going back from ``start``."""
        for i in range(n):
            self.add(at=start + i * step)

    def _newest_first(self) -> list[dict[str, Any]]:
        with self._lock:
            return sorted(self.history, key=lambda d: (d["delivered_at"], d["id"]), reverse=True)

    def _list(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        per_page = min(int(request.query.get("per_page", "30")), 100)
        items = self._newest_first()
        start = 0
        cursor = request.query.get("cursor")
        if cursor:
            if not cursor.startswith("v1_"):
                return message_response(422, "Invalid cursor")
            after = int(cursor[3:])  # the id of the last item of the previous page
            start = next((i + 1 for i, d in enumerate(items) if d["id"] == after), len(items))
        page = items[start : start + per_page]
        headers = {}
        if start + per_page < len(items) and page:
            url = f"{self.standin.url}/app/hook/deliveries?per_page={per_page}&cursor=v1_{page[-1]['id']}"
            headers["Link"] = f'<{url}>; rel="next"'
        return json_response(page, headers=headers)

    def _one(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        delivery_id = int(match["id"])
        item = next((d for d in self.history if d["id"] == delivery_id), None)
        if item is None:
            return message_response(404, "Not Found")
        detail = {
            **item,
            "url": "https://blog.example.com/webhooks/github",
            "request": {
                "headers": {"X-GitHub-Event": item["event"], "X-GitHub-Delivery": item["guid"]},
                "payload": self.payloads.get(delivery_id, {}),
            },
            "response": {"headers": {}, "payload": None},
        }
        return json_response(detail)

    def _attempt(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        delivery_id = int(match["id"])
        if not any(d["id"] == delivery_id for d in self.history):
            return message_response(404, "Not Found")
        if delivery_id in self.refuse:
            return message_response(422, "Validation Failed")
        with self._lock:
            self.redelivered.append(delivery_id)
        return json_response({}, status=202)
