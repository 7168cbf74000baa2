"""Every read answer is cacheable and revalidates: ETag, 304, Cache-Control, Last-Modified, gzip."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest

from function.aws.dispatch import dispatch
from tests.api.conftest import USER, ReadApi
from tests.kit.builders import T0, article, at
from tests.kit.deliveries import aws_event

READ_ROUTES = [
    f"/users/{USER}/articles",
    f"/users/{USER}/articles/a1",
    f"/users/{USER}/tags",
    f"/users/{USER}/feed.xml",
    f"/users/{USER}/sitemap.xml",
]


@pytest.fixture
def filled(api: ReadApi) -> ReadApi:
    api.add([article(f"a{i}", tags=("tech/aws",), body="本文です。" * 200) for i in range(5)], T0)
    return api


@pytest.mark.parametrize("path", READ_ROUTES)
def test_every_read_route_revalidates_with_304(filled: ReadApi, path: str) -> None:
    first = filled.get(path)
    assert first.status_code == 200
    etag = first.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    assert first.headers["Cache-Control"] == "public, max-age=60, stale-while-revalidate=600"

    again = filled.get(path, headers={"If-None-Match": etag})

    assert again.status_code == 304
    assert again.data == b""
    assert again.headers["ETag"] == etag
    assert again.headers["Cache-Control"] == first.headers["Cache-Control"]


def test_last_modified_is_the_newest_change(filled: ReadApi) -> None:
    filled.add([article("a1", body="edited")], at(3600))
    answer = filled.get(f"/users/{USER}/articles")
    assert answer.last_modified is not None
    assert answer.last_modified.replace(tzinfo=None) == at(3600).replace(microsecond=0)


def test_an_edit_changes_the_etag(filled: ReadApi) -> None:
    path = f"/users/{USER}/articles/a1"
    before = filled.get(path).headers["ETag"]
    filled.add([article("a1", body="edited")], at(60))
    answer = filled.get(path, headers={"If-None-Match": before})
    assert answer.status_code == 200 and answer.headers["ETag"] != before


def test_cache_control_is_a_setting(make_api: Any) -> None:
    api = make_api(read_cache_control="public, max-age=5")
    assert api.get(f"/users/{USER}/articles").headers["Cache-Control"] == "public, max-age=5"


def test_errors_carry_no_validators(api: ReadApi) -> None:
    answer = api.get("/users/nobody/articles")
    assert answer.status_code == 404 and "ETag" not in answer.headers


def test_large_answers_are_gzipped_when_accepted(filled: ReadApi) -> None:
    path = f"/users/{USER}/articles/a1"
    plain = filled.get(path)
    zipped = filled.get(path, headers={"Accept-Encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain.headers
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["Vary"]
    assert json.loads(gzip.decompress(zipped.data)) == plain.get_json()
    assert len(zipped.data) < len(plain.data)
    # Another representation, another tag; either revalidates.
    assert zipped.headers["ETag"] != plain.headers["ETag"]
    for etag in (zipped.headers["ETag"], plain.headers["ETag"]):
        again = filled.get(path, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
        assert again.status_code == 304 and again.headers["ETag"] == zipped.headers["ETag"]


def test_small_answers_and_refusals_stay_plain(filled: ReadApi) -> None:
    small = filled.get(f"/users/{USER}/tags", headers={"Accept-Encoding": "gzip"})
    assert len(small.data) <= 1024 and "Content-Encoding" not in small.headers
    refused = filled.get(f"/users/{USER}/articles/a1", headers={"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers


def test_json_is_utf8_without_escapes(filled: ReadApi) -> None:
    answer = filled.get(f"/users/{USER}/articles/a1")
    assert "本文です。".encode() in answer.data
    assert b"\\u" not in answer.data


def test_gzip_survives_the_http_api_v2_event(filled: ReadApi) -> None:
    event = aws_event("apiGatewayProxyV2Event")
    path = f"/users/{USER}/articles/a1"
    event.update(rawPath=path, rawQueryString="", body=None, isBase64Encoded=False)
    event.pop("cookies", None)
    event["headers"] = {"accept-encoding": "gzip", "host": "api.example.com"}
    event["requestContext"]["http"].update(method="GET", path=path)

    answer = dispatch(filled.app, event, None)

    assert answer["statusCode"] == 200
    assert answer["isBase64Encoded"] is True
    headers = {k.lower(): v for k, v in answer["headers"].items()}
    assert headers["content-encoding"] == "gzip"
    body = json.loads(gzip.decompress(base64.b64decode(answer["body"])))
    assert body["slug"] == "a1" and "本文です。" in body["content"]
