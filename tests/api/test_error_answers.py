"""Error answers are never cached, and the feed and sitemap never take their links from ``Host``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.api.conftest import USER, ReadApi
from tests.kit.builders import article, at


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/users/nobody/articles", 404),
        ("GET", f"/users/{USER}/articles?limit=0", 400),
        ("GET", f"/users/{USER}/articles?cursor=forged", 400),
        ("GET", "/no/such/route", 404),
        ("DELETE", f"/users/{USER}/articles", 405),
        ("POST", "/webhooks/github", 401),
    ],
)
def test_every_error_answer_says_no_store(api: ReadApi, method: str, path: str, status: int) -> None:
    answer = api.client.open(path, method=method)
    assert answer.status_code == status
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.get_json()["error"]


def test_a_successful_read_keeps_its_cache_control(api: ReadApi) -> None:
    answer = api.get(f"/users/{USER}/articles")
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] != "no-store"


@pytest.mark.parametrize("document", ["feed.xml", "sitemap.xml"])
def test_without_site_url_feed_and_sitemap_answer_404_naming_the_setting(
    make_api: Callable[..., ReadApi], document: str
) -> None:
    api = make_api(site_url=None)
    api.add([article("a1")], at(0))
    answer = api.get(f"/users/{USER}/{document}", headers={"Host": "evil.example"})
    assert answer.status_code == 404
    assert "SITE_URL" in answer.get_json()["message"]
    assert answer.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("document", ["feed.xml", "sitemap.xml"])
def test_the_host_header_never_reaches_a_link(api: ReadApi, document: str) -> None:
    api.add([article("a1")], at(0))
    answer = api.get(f"/users/{USER}/{document}", headers={"Host": "evil.example"})
    assert answer.status_code == 200
    assert b"evil.example" not in answer.data
    assert b"https://blog.example.com/articles/a1" in answer.data
