"""The page cursor's key: random, kept in the database, never derived from the webhook secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable

from function.store.connection import connection
from function.store.models import ServerKey
from tests.api.conftest import USER, ReadApi
from tests.kit.builders import article, at
from tests.kit.deliveries import SECRET

LIST = f"/users/{USER}/articles"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _first_cursor(api: ReadApi) -> str:
    cursor: str = api.get(LIST, query_string={"limit": "1"}).get_json()["nextCursor"]
    assert cursor
    return cursor


def _seeded(make_api: Callable[..., ReadApi]) -> ReadApi:
    api = make_api()
    api.add([article("a1"), article("a2")], at(0))
    api.add([article("b1")], at(1))
    return api


def test_whoever_knows_the_webhook_secret_cannot_sign_a_cursor(make_api: Callable[..., ReadApi]) -> None:
    # GIVEN someone who guessed the webhook secret and signs a cursor with a key made from it
    api = _seeded(make_api)
    data = json.dumps({"u": USER, "f": [None, None], "p": "2099-01-01T00:00:00.000000", "s": "x"}).encode()
    for key in (
        hashlib.sha256(b"blog-api page cursor\0" + SECRET.encode()).digest(),
        SECRET.encode(),
    ):
        forged = f"{_b64(data)}.{_b64(hmac.new(key, data, hashlib.sha256).digest()[:16])}"
        # THEN the server does not take it for one of its own
        answer = api.get(LIST, query_string={"cursor": forged})
        assert answer.status_code == 400, answer.get_json()


def test_a_cursor_outlives_the_process_that_made_it(make_api: Callable[..., ReadApi]) -> None:
    # GIVEN a cursor from one app (one Lambda environment)
    cursor = _first_cursor(_seeded(make_api))
    # WHEN another app on the same database, with another webhook secret, reads the next page
    other = make_api(webhook_secret="another secret entirely, 32 chars or more")
    answer = other.get(LIST, query_string={"limit": "1", "cursor": cursor})
    # THEN it follows on where the first left off
    assert answer.status_code == 200
    assert [a["slug"] for a in answer.get_json()["articles"]] == ["a2"]


def test_the_key_is_random_and_rotating_it_only_invalidates_cursors(make_api: Callable[..., ReadApi]) -> None:
    api = _seeded(make_api)
    cursor = _first_cursor(api)
    with connection(api.db):
        [stored] = [str(row.value) for row in ServerKey.select(ServerKey.value).bind(api.db)]
        assert len(bytes.fromhex(stored)) == 32
        assert SECRET.encode().hex() not in stored
        # WHEN the key is rotated (its row deleted)
        ServerKey.delete().bind(api.db).execute()
    fresh = make_api()
    # THEN a process started afterwards refuses the old cursor, and pages with a new key
    assert fresh.get(LIST, query_string={"cursor": cursor}).status_code == 400
    assert fresh.get(LIST, query_string={"limit": "1"}).get_json()["nextCursor"] != cursor
    assert len(fresh.get(LIST).get_json()["articles"]) == 3
