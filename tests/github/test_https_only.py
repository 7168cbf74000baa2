"""Whatever the client sends carries credentials (tokens, the App's JWT, signed download URLs): it goes
over https only, plain http only to this machine (the tests' stand-ins), on every hop of a redirect."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from function.errors import HttpError
from function.github.http import HttpClient
from tests.kit.github_standin import GitHubStandIn, StandInRequest, StandInResponse


@pytest.fixture
def client() -> Iterator[HttpClient]:
    with HttpClient(connect_timeout=1.0, read_timeout=0.5, attempts=1) as http:
        yield http


def test_plain_http_to_another_host_is_refused_before_anything_is_sent(client: HttpClient) -> None:
    # 192.0.2.0/24 is reserved for documentation: nothing answers there, so a refusal that came from
    # trying would be a time-out, not this message.
    with pytest.raises(HttpError, match="not https") as refused:
        client.request(
            "GET", "http://192.0.2.10/app/installations?token=ghs_secret", headers={"Authorization": "x"}
        )
    assert "ghs_secret" not in str(refused.value)


def test_a_redirect_to_plain_http_elsewhere_is_not_followed(client: HttpClient) -> None:
    # GIVEN the API (here on loopback) redirecting a download to a plain-http host, a token in its query
    def away(request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        return StandInResponse(302, b"", {"Location": "http://192.0.2.10/archive.tar.gz?token=ghs_secret"})

    with GitHubStandIn() as standin:
        standin.add_route("GET", r"/download", away, kind="download", auth=None)
        # WHEN the client follows it, THEN it stops at the http hop
        with pytest.raises(HttpError, match="not https"):
            client.request("GET", standin.url + "/download")
        assert standin.count("download") == 1
