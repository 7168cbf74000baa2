"""The stand-in itself: the parts the source tests do not reach (Contents API, auth refusals, records)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

import pytest

from function.github.http import HttpClient
from tests.kit.github_fixtures import INSTALLATION_ID, REPO, AppKey, build_github_source
from tests.kit.github_standin import (
    CONTENTS_LIST_LIMIT,
    GitHubStandIn,
    StandInRequest,
    StandInResponse,
    json_response,
)


@pytest.fixture
def token(github: GitHubStandIn, github_app_key: AppKey) -> Iterator[str]:
    parts = build_github_source(github, github_app_key)
    yield parts.auth.installation_token(INSTALLATION_ID)
    parts.http.close()


@pytest.fixture
def http() -> Iterator[HttpClient]:
    with HttpClient(attempts=1) as client:
        yield client


def test_repo_routes_refuse_requests_without_a_valid_token(github: GitHubStandIn, http: HttpClient) -> None:
    github.set_files({"articles/a.md": b"a"})

    missing = http.request("GET", f"{github.url}/repos/{REPO}")
    forged = http.request("GET", f"{github.url}/repos/{REPO}", headers={"Authorization": "token ghs_forged"})

    assert missing.status == forged.status == 401


def test_contents_api_lists_a_folder_and_serves_files_in_base64(
    github: GitHubStandIn, http: HttpClient, token: str
) -> None:
    # GIVEN a folder with two files and a subfolder
    github.set_files({"articles/a.md": b"alpha", "articles/b.md": b"beta", "articles/img/x.png": b"png"})
    auth = {"Authorization": f"token {token}"}

    # WHEN the baseline lists the folder and reads one file
    listing = http.request("GET", f"{github.url}/repos/{REPO}/contents/articles?ref=main", headers=auth)
    file = http.request("GET", f"{github.url}/repos/{REPO}/contents/articles/b.md?ref=main", headers=auth)

    # THEN it gets GitHub's shapes
    entries = listing.json()
    assert [(e["name"], e["type"]) for e in entries] == [("a.md", "file"), ("b.md", "file"), ("img", "dir")]
    body = file.json()
    assert body["encoding"] == "base64"
    assert base64.b64decode(body["content"]) == b"beta"
    assert github.count("contents") == 2


def test_contents_listing_stops_at_github_limit(github: GitHubStandIn, http: HttpClient, token: str) -> None:
    github.set_files({f"articles/p{i:05d}.md": b"x" for i in range(CONTENTS_LIST_LIMIT + 5)})

    listing = http.request(
        "GET", f"{github.url}/repos/{REPO}/contents/articles", headers={"Authorization": f"Bearer {token}"}
    )

    assert len(listing.json()) == CONTENTS_LIST_LIMIT


def test_blob_json_form_is_base64(github: GitHubStandIn, http: HttpClient, token: str) -> None:
    github.set_files({"articles/a.md": b"\xff\xfe not utf-8"})
    sha = github.repos[REPO].commits[github.head()]["articles/a.md"]

    blob = http.request(
        "GET", f"{github.url}/repos/{REPO}/git/blobs/{sha}", headers={"Authorization": f"Bearer {token}"}
    )

    assert base64.b64decode(blob.json()["content"]) == b"\xff\xfe not utf-8"


def test_codeload_needs_the_ticket_from_the_redirect_not_a_token(
    github: GitHubStandIn, http: HttpClient
) -> None:
    head = github.set_files({"articles/a.md": b"a"})

    response = http.request("GET", f"{github.url}/_codeload/octo/blog/legacy.tar.gz/{head}?token=guess")

    assert response.status == 404


def test_added_routes_extend_the_stand_in(github: GitHubStandIn, github_app_key: AppKey) -> None:
    # GIVEN a route added the way the App hook-deliveries API would be
    def deliveries(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        return json_response([{"id": 1, "guid": "abc", "status_code": 502, "redelivery": False}])

    github.add_route("GET", r"/app/hook/deliveries", deliveries, kind="hook_deliveries", auth="app")
    parts = build_github_source(github, github_app_key)

    # WHEN it is called with and without the App JWT
    with_jwt = parts.http.request(
        "GET",
        f"{github.url}/app/hook/deliveries",
        headers={"Authorization": f"Bearer {parts.auth.app_jwt()}"},
    )
    without = parts.http.request("GET", f"{github.url}/app/hook/deliveries")
    parts.http.close()

    # THEN auth is checked and requests are counted under the new kind
    assert with_jwt.status == 200
    assert with_jwt.json()[0]["guid"] == "abc"
    assert without.status == 401
    assert github.count("hook_deliveries") == 2
