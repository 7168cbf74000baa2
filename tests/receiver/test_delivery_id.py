"""``X-GitHub-Delivery`` is not signed: anything but GitHub's shape (a UUID) is a 400 before anything is
logged as a delivery or stored."""

from __future__ import annotations

import json

import pytest

from tests.kit.blog_checks import delivery
from tests.kit.blog_fixtures import Blog
from tests.kit.deliveries import github_headers, push_payload

WEBHOOK = "/webhooks/github"


@pytest.mark.parametrize(
    "bad",
    [
        "\x1b[31mred\x1b[0m",
        "tab\tseparated",
        "d-1",
        "72d3162e-cc78-11e3-81ab-4c9367dc0958 ",
        "{72d3162e-cc78-11e3-81ab-4c9367dc0958}",
        "72d3162ecc7811e381ab4c9367dc0958",
        "urn:uuid:72d3162e-cc78-11e3-81ab-4c9367dc0958",
    ],
)
def test_a_delivery_id_not_shaped_like_githubs_is_a_400_and_stores_nothing(blog: Blog, bad: str) -> None:
    # GIVEN a validly signed push (inline mode: it would be synced in the request)
    body = json.dumps(push_payload()).encode()
    headers = {**github_headers(body), "X-GitHub-Delivery": bad}
    # WHEN its delivery id is not a UUID
    answer = blog.client.post(WEBHOOK, data=body, headers=headers)
    # THEN it is refused, saying why, and no delivery was recorded
    assert answer.status_code == 400
    assert answer.get_json()["error"] == "BAD_REQUEST"
    assert "X-GitHub-Delivery" in answer.get_json()["message"]
    with blog.store() as store:
        assert store.deliveries.recent_deliveries(10) == []


def test_githubs_delivery_id_is_recorded_as_sent(blog: Blog) -> None:
    blog.commit({"README.md": b"# a blog\n"})
    assert blog.push(delivery="f2b3c4d5-0000-4000-8000-00000000abcd").status_code == 200
    assert delivery(blog, "f2b3c4d5-0000-4000-8000-00000000abcd").outcome == "success"
