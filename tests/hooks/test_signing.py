"""Standard Webhooks signatures, checked with the specification's reference library."""

from __future__ import annotations

import base64
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from function.hooks.signing import new_message_id, new_secret, secret_key, signed_headers

BODY = b'{"type":"ping","timestamp":"2026-03-01T09:30:15.123Z","data":{"user":"alice"}}'


def now() -> int:
    return int(time.time())


def test_a_new_secret_is_whsec_and_32_random_bytes() -> None:
    first, second = new_secret(), new_secret()
    assert first.startswith("whsec_") and first != second
    assert len(base64.b64decode(first[len("whsec_") :])) == 32
    assert secret_key(first) == base64.b64decode(first[6:])


def test_the_reference_library_verifies_our_signature() -> None:
    secret = new_secret()
    headers = signed_headers([secret], new_message_id(), now(), BODY)

    assert Webhook(secret).verify(BODY, headers) == {
        "type": "ping",
        "timestamp": "2026-03-01T09:30:15.123Z",
        "data": {"user": "alice"},
    }
    assert headers["webhook-id"].startswith("msg_")
    assert headers["webhook-signature"].startswith("v1,")


def test_a_changed_body_id_or_timestamp_does_not_verify() -> None:
    secret = new_secret()
    headers = signed_headers([secret], "msg_1", now(), BODY)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace(b"alice", b"mallory"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, {**headers, "webhook-id": "msg_2"})
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, {**headers, "webhook-timestamp": str(now() - 1)})
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(BODY, headers)


def test_two_secrets_give_two_signatures_each_of_which_verifies_alone() -> None:
    new, old = new_secret(), new_secret()
    headers = signed_headers([new, old], "msg_1", now(), BODY)

    assert len(headers["webhook-signature"].split(" ")) == 2
    Webhook(new).verify(BODY, headers)
    Webhook(old).verify(BODY, headers)


@pytest.mark.parametrize(
    "bad", ["", "sk_abc", "whsec_not base64!", "whsec_" + base64.b64encode(b"short").decode()]
)
def test_a_malformed_secret_is_refused_without_being_echoed(bad: str) -> None:
    with pytest.raises(ValueError) as caught:
        secret_key(bad)
    assert bad[6:] not in str(caught.value) or not bad[6:]
