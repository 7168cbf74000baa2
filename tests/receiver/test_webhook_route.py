"""POST /webhooks/github in Lambda mode: every status of the accept path."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient

from function.app import create_app
from function.webhooks import envelope
from function.webhooks.envelope import KIND_COMPACT, KIND_STANDARD
from function.webhooks.signature import sign
from tests.kit.deliveries import SECRET, delivery_uuid, github_headers, github_payload, push_payload
from tests.kit.fakes import RecordingInvoker

URL = "/webhooks/github"


def post(client: FlaskClient, body: bytes, **kw: Any) -> Any:
    return client.post(URL, data=body, headers=github_headers(body, **kw))


def body_of(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def assert_error(answer: Any, status: int, code: str) -> None:
    assert answer.status_code == status
    assert answer.is_json
    assert answer.get_json()["error"] == code
    assert isinstance(answer.get_json()["message"], str) and answer.get_json()["message"]


def test_missing_signature_is_unauthorized(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    body = body_of(push_payload())
    headers = github_headers(body)
    del headers["X-Hub-Signature-256"]
    answer = lambda_client.post(URL, data=body, headers=headers)
    assert_error(answer, 401, "UNAUTHORIZED")
    assert invoker.payloads == []


def test_wrong_signature_is_unauthorized(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    body = body_of(push_payload())
    answer = post(lambda_client, body, secret="not-the-secret")
    assert_error(answer, 401, "UNAUTHORIZED")
    assert invoker.payloads == []


def test_signature_is_checked_before_the_event_header(lambda_client: FlaskClient) -> None:
    answer = lambda_client.post(URL, data=b"{}", headers={"X-Hub-Signature-256": "sha256=00"})
    assert_error(answer, 401, "UNAUTHORIZED")


def test_missing_event_header_is_bad_request(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    body = body_of(push_payload())
    headers = github_headers(body)
    del headers["X-GitHub-Event"]
    answer = lambda_client.post(URL, data=body, headers=headers)
    assert_error(answer, 400, "BAD_REQUEST")
    assert invoker.payloads == []


@pytest.mark.parametrize("body", [b"not json", b"{", b"\xff\xfe\x00", b""])
def test_signed_body_that_is_not_json_is_bad_request(
    lambda_client: FlaskClient, invoker: RecordingInvoker, body: bytes
) -> None:
    answer = post(lambda_client, body)
    assert_error(answer, 400, "BAD_REQUEST")
    assert invoker.payloads == []


def test_ping_answers_pong(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    answer = post(lambda_client, github_payload("ping/with-app_id"), event="ping")
    assert answer.status_code == 200
    assert answer.get_json() == {"status": "pong"}
    assert invoker.payloads == []


def test_other_events_are_skipped(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    answer = post(lambda_client, b'{"action": "opened"}', event="issues")
    assert answer.status_code == 200
    assert answer.get_json()["status"] == "skipped"
    assert "issues" in answer.get_json()["reason"]
    assert invoker.payloads == []


@pytest.mark.parametrize(
    ("payload", "reason_part"),
    [
        (push_payload(ref="refs/heads/feature/x"), "not the tracked branch"),
        (None, "tag"),
    ],
)
def test_pushes_that_are_not_to_the_tracked_branch_are_skipped(
    lambda_client: FlaskClient, invoker: RecordingInvoker, payload: Any, reason_part: str
) -> None:
    body = body_of(payload) if payload is not None else github_payload("push/with-installation")
    answer = post(lambda_client, body)
    assert answer.status_code == 200
    assert answer.get_json()["status"] == "skipped"
    assert reason_part in answer.get_json()["reason"]
    assert invoker.payloads == []


def test_branch_deletion_is_skipped(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    payload = push_payload()
    payload.update(deleted=True, after="0" * 40, head_commit=None)
    answer = post(lambda_client, body_of(payload))
    assert answer.status_code == 200
    assert answer.get_json() == {"status": "skipped", "reason": "branch deleted"}
    assert invoker.payloads == []


def test_article_branch_setting_overrides_the_default_branch(make_settings: Any) -> None:
    invoker = RecordingInvoker()
    client = create_app(make_settings(article_branch="blog"), invoker=invoker).test_client()
    assert post(client, body_of(push_payload(ref="refs/heads/main"))).get_json()["status"] == "skipped"
    assert post(client, body_of(push_payload(ref="refs/heads/blog"))).status_code == 202
    assert len(invoker.payloads) == 1


def test_push_to_tracked_branch_is_accepted_and_queued_with_the_exact_body(
    lambda_client: FlaskClient, invoker: RecordingInvoker
) -> None:
    # GIVEN the recorded App push re-aimed at the default branch
    body = body_of(push_payload())
    # WHEN GitHub delivers it
    answer = post(lambda_client, body, delivery="d-123")
    # THEN it is acknowledged and exactly one standard envelope carries GitHub's bytes and signature
    assert answer.status_code == 202
    assert answer.get_json() == {"status": "accepted", "message": "Queued for async processing"}
    assert len(invoker.payloads) == 1
    sent = json.loads(invoker.payloads[0])
    assert sent["kind"] == KIND_STANDARD
    assert sent["event"] == "push" and sent["delivery"] == delivery_uuid("d-123")
    assert base64.b64decode(sent["body"]) == body
    assert sent["signature"] == sign(SECRET, body)
    assert envelope.parse_and_verify(SECRET, invoker.payloads[0]).body == body


def test_recorded_branch_creation_push_is_accepted(
    lambda_client: FlaskClient, invoker: RecordingInvoker
) -> None:
    # The octokit payload pushes to its default branch "master" with installation 1.
    answer = post(lambda_client, github_payload("push/with-new-branch"))
    assert answer.status_code == 202
    assert len(invoker.payloads) == 1


def test_form_encoded_delivery_is_accepted(lambda_client: FlaskClient, invoker: RecordingInvoker) -> None:
    body = urlencode({"payload": json.dumps(push_payload())}).encode()
    answer = post(lambda_client, body, content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 202
    assert base64.b64decode(json.loads(invoker.payloads[0])["body"]) == body


def test_form_encoded_delivery_without_payload_field_is_bad_request(lambda_client: FlaskClient) -> None:
    answer = post(lambda_client, b"other=1", content_type="application/x-www-form-urlencoded")
    assert_error(answer, 400, "BAD_REQUEST")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: p.update(ref=5),
        lambda p: p.update(installation="x"),
        lambda p: p.pop("repository"),
        lambda p: p.pop("installation"),
        lambda p: p.update(repository={"full_name": 7}),
    ],
    ids=["ref-number", "installation-string", "no-repository", "no-installation", "full-name-number"],
)
def test_push_of_the_wrong_shape_is_bad_request(
    lambda_client: FlaskClient, invoker: RecordingInvoker, mutate: Any
) -> None:
    payload = push_payload()
    mutate(payload)
    answer = post(lambda_client, body_of(payload))
    assert_error(answer, 400, "BAD_REQUEST")
    assert invoker.payloads == []


def test_json_that_is_not_an_object_is_bad_request(lambda_client: FlaskClient) -> None:
    assert_error(post(lambda_client, b"[1, 2, 3]"), 400, "BAD_REQUEST")


def test_failed_self_invoke_answers_503(make_settings: Any) -> None:
    client = create_app(make_settings(), invoker=RecordingInvoker(fail=True)).test_client()
    answer = post(client, body_of(push_payload()))
    assert_error(answer, 503, "UNAVAILABLE")


def test_body_too_big_for_lambda_is_sent_in_the_compact_signed_form(
    lambda_client: FlaskClient, invoker: RecordingInvoker
) -> None:
    # GIVEN a push of 800 KB: base64 makes it ~1.07 MB, over Lambda's 1 MB asynchronous limit
    payload = push_payload()
    payload["padding"] = "x" * 800_000
    body = body_of(payload)
    # WHEN delivered
    answer = post(lambda_client, body, delivery="big-1")
    # THEN it is still accepted, with a small compact envelope that verifies
    assert answer.status_code == 202
    sent = invoker.payloads[0]
    assert len(sent) < 4096
    assert json.loads(sent)["kind"] == KIND_COMPACT
    parsed = envelope.parse_and_verify(SECRET, sent)
    assert (
        parsed.push is not None and parsed.push.repository == "octo/blog" and parsed.push.installation_id == 1
    )


def test_body_just_under_the_limit_keeps_the_standard_form(
    lambda_client: FlaskClient, invoker: RecordingInvoker
) -> None:
    payload = push_payload()
    payload["padding"] = "x" * 700_000  # base64 → ~0.94 MB
    answer = post(lambda_client, body_of(payload))
    assert answer.status_code == 202
    assert json.loads(invoker.payloads[0])["kind"] == KIND_STANDARD
    assert len(invoker.payloads[0]) <= envelope.PAYLOAD_BUDGET


def test_payload_refused_as_too_large_is_retried_compact(make_settings: Any) -> None:
    # Lambda's own count may differ from ours: a 413 falls back to the compact form.
    invoker = RecordingInvoker(limit=2048)
    client = create_app(make_settings(), invoker=invoker).test_client()
    answer = post(client, body_of(push_payload()))
    assert answer.status_code == 202
    assert json.loads(invoker.payloads[0])["kind"] == KIND_COMPACT


def test_answers_are_json_for_unknown_routes_and_methods(lambda_client: FlaskClient) -> None:
    assert_error(lambda_client.get("/nope"), 404, "NOT_FOUND")
    wrong_method = lambda_client.get(URL)
    assert_error(wrong_method, 405, "METHOD_NOT_ALLOWED")
    assert wrong_method.headers["Allow"] == "POST"  # HTTP requires a 405 to name the allowed methods


def test_options_gets_the_json_405_not_an_empty_html_page(lambda_client: FlaskClient) -> None:
    for path in (URL, "/healthz", "/users/alice/articles"):
        answer = lambda_client.options(path)
        assert_error(answer, 405, "METHOD_NOT_ALLOWED")
        assert "OPTIONS" not in answer.headers["Allow"]


def test_healthz(lambda_client: FlaskClient) -> None:
    answer = lambda_client.get("/healthz")
    assert answer.status_code == 200 and answer.get_json() == {"status": "ok"}


def test_deliveries_without_an_id_get_distinct_ids(
    lambda_client: FlaskClient, invoker: RecordingInvoker
) -> None:
    body = body_of(push_payload())
    headers = github_headers(body)
    del headers["X-GitHub-Delivery"]
    for _ in range(2):
        assert lambda_client.post(URL, data=body, headers=headers).status_code == 202
    ids = {json.loads(p)["delivery"] for p in invoker.payloads}
    assert len(ids) == 2
