"""CORS: a listed origin may read from a browser; nobody may call the webhook or /events from one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import ORIGIN, USER, ReadApi
from tests.kit.builders import T0, article


@pytest.fixture
def cors_api(make_api: Any) -> ReadApi:
    api: ReadApi = make_api(cors_allowed_origins=(ORIGIN, "http://localhost:3000"))
    api.add([article("a1")], T0)
    return api


@pytest.mark.parametrize(
    "path", [f"/users/{USER}/articles", f"/users/{USER}/articles/a1", f"/users/{USER}/tags"]
)
def test_a_listed_origin_is_allowed(cors_api: ReadApi, path: str) -> None:
    answer = cors_api.get(path, headers={"Origin": ORIGIN})
    assert answer.status_code == 200
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "Origin" in answer.headers["Vary"]
    assert "ETag" in answer.headers["Access-Control-Expose-Headers"]


def test_a_304_and_a_404_carry_cors_too(cors_api: ReadApi) -> None:
    etag = cors_api.get(f"/users/{USER}/articles").headers["ETag"]
    again = cors_api.get(f"/users/{USER}/articles", headers={"Origin": ORIGIN, "If-None-Match": etag})
    assert again.status_code == 304 and again.headers["Access-Control-Allow-Origin"] == ORIGIN
    missing = cors_api.get("/users/nobody/articles", headers={"Origin": ORIGIN})
    assert missing.status_code == 404 and missing.headers["Access-Control-Allow-Origin"] == ORIGIN


@pytest.mark.parametrize("origin", ["https://evil.example", "https://blog.example.com.evil", "null", ""])
def test_other_origins_get_no_cors_headers(cors_api: ReadApi, origin: str) -> None:
    answer = cors_api.get(f"/users/{USER}/articles", headers={"Origin": origin})
    assert answer.status_code == 200
    assert not [h for h in answer.headers.keys() if h.lower().startswith("access-control-")]


def test_no_origins_configured_means_no_cors(api: ReadApi) -> None:
    answer = api.get(f"/users/{USER}/articles", headers={"Origin": ORIGIN})
    assert "Access-Control-Allow-Origin" not in answer.headers


def test_a_preflight_from_a_listed_origin_is_a_204(cors_api: ReadApi) -> None:
    answer = cors_api.client.options(
        f"/users/{USER}/articles",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "if-none-match",
        },
    )
    assert answer.status_code == 204
    assert answer.data == b""
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "GET" in answer.headers["Access-Control-Allow-Methods"]
    assert answer.headers["Access-Control-Allow-Headers"] == "if-none-match"


def test_a_preflight_from_elsewhere_is_the_json_405(cors_api: ReadApi) -> None:
    answer = cors_api.client.options(
        f"/users/{USER}/articles",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert answer.status_code == 405 and answer.get_json()["error"] == "METHOD_NOT_ALLOWED"
    assert "Access-Control-Allow-Origin" not in answer.headers


@pytest.mark.parametrize("path", ["/webhooks/github", "/events"])
def test_webhook_and_events_never_answer_cors(cors_api: ReadApi, path: str) -> None:
    headers = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    preflight = cors_api.client.options(path, headers=headers)
    posted = cors_api.client.post(path, data=b"{}", headers={"Origin": ORIGIN})
    for answer in (preflight, posted):
        assert answer.status_code >= 400
        assert not [h for h in answer.headers.keys() if h.lower().startswith("access-control-")]


@pytest.fixture
def public_api(make_api: Any) -> ReadApi:
    api: ReadApi = make_api(cors_allowed_origins=("*",))
    api.add([article("a1")], T0)
    return api


@pytest.mark.parametrize(
    "path",
    [
        f"/users/{USER}/articles?page=1&perPage=10",
        f"/users/{USER}/articles/tag-facets",
        f"/users/{USER}/articles/a1",
        "/users/nobody/articles",
    ],
)
@pytest.mark.parametrize("origin", [ORIGIN, "https://elsewhere.example", None])
def test_any_origin_reads_a_public_api_without_credentials(
    public_api: ReadApi, path: str, origin: str | None
) -> None:
    answer = public_api.get(path, headers={"Origin": origin} if origin else {})
    assert answer.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in answer.headers
    # One answer for every origin: nothing for a cache to key on.
    assert "Origin" not in answer.headers.get("Vary", "")


def test_a_preflight_to_a_public_api_is_a_204_for_any_origin(public_api: ReadApi) -> None:
    answer = public_api.client.options(
        f"/users/{USER}/articles/tag-facets",
        headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"},
    )
    assert answer.status_code == 204
    assert answer.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in answer.headers


@pytest.mark.parametrize("path", ["/webhooks/github", "/events"])
def test_a_public_api_still_answers_no_cors_on_webhook_and_events(public_api: ReadApi, path: str) -> None:
    headers = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    preflight = public_api.client.options(path, headers=headers)
    posted = public_api.client.post(path, data=b"{}", headers={"Origin": ORIGIN})
    for answer in (preflight, posted):
        assert answer.status_code >= 400
        assert not [h for h in answer.headers.keys() if h.lower().startswith("access-control-")]
