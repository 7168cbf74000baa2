"""function.handler: HTTP events through serverless-wsgi, every other event through the pass-through path."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from flask import Flask

from function import handler as handler_module
from function.aws.dispatch import dispatch, is_http_event
from function.errors import PassThroughFailed
from tests.kit.deliveries import SECRET, as_http_event, aws_event, github_headers, push_payload
from tests.kit.fakes import RecordingInvoker

SHAPES = [
    "apiGatewayProxyEvent",
    "apiGatewayProxyV2Event",
    "lambdaFunctionUrlEvent",
    "albMultiValueHeadersEvent",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_http_event_shapes_are_recognised(shape: str) -> None:
    assert is_http_event(aws_event(shape))


def test_eventbridge_and_envelopes_are_not_http_events() -> None:
    assert not is_http_event(aws_event("eventBridgeEvent"))
    assert not is_http_event({"kind": "github-webhook"})
    assert not is_http_event("text")


@pytest.mark.parametrize("shape", SHAPES)
def test_signed_push_through_each_http_shape_is_accepted(
    shape: str, lambda_app: Flask, invoker: RecordingInvoker
) -> None:
    body = json.dumps(push_payload()).encode()
    event = as_http_event(shape, "POST", "/webhooks/github", body, github_headers(body))
    answer = dispatch(lambda_app, event, None)
    assert answer["statusCode"] == 202, answer
    assert json.loads(answer["body"])["status"] == "accepted"
    assert len(invoker.payloads) == 1
    assert json.loads(invoker.payloads[0])["kind"] == "github-webhook"


@pytest.mark.parametrize("shape", SHAPES)
def test_unsigned_push_through_each_http_shape_is_unauthorized(
    shape: str, lambda_app: Flask, invoker: RecordingInvoker
) -> None:
    body = json.dumps(push_payload()).encode()
    headers = github_headers(body, secret="wrong-secret")
    answer = dispatch(lambda_app, as_http_event(shape, "POST", "/webhooks/github", body, headers), None)
    assert answer["statusCode"] == 401
    assert json.loads(answer["body"])["error"] == "UNAUTHORIZED"
    assert invoker.payloads == []


@pytest.mark.parametrize("shape", SHAPES)
def test_events_route_over_http_is_forbidden_in_lambda_mode_even_when_signed(
    shape: str, lambda_app: Flask, invoker: RecordingInvoker
) -> None:
    # GIVEN a perfectly valid envelope, as the accept path would queue it
    body = json.dumps(push_payload()).encode()
    dispatch(lambda_app, as_http_event(shape, "POST", "/webhooks/github", body, github_headers(body)), None)
    envelope_bytes = invoker.payloads[0]
    # WHEN someone posts it to /events through API Gateway
    event = as_http_event(shape, "POST", "/events", envelope_bytes, {"Content-Type": "application/json"})
    answer = dispatch(lambda_app, event, None)
    # THEN it is refused before anything runs
    assert answer["statusCode"] == 403
    assert json.loads(answer["body"])["error"] == "FORBIDDEN"


def test_tampered_envelope_is_rejected_with_401_and_no_retry(lambda_app: Flask) -> None:
    body = json.dumps(push_payload()).encode()
    tampered = {
        "kind": "github-webhook",
        "event": "push",
        "delivery": "d-1",
        "signature": github_headers(body, secret="attacker")["X-Hub-Signature-256"],
        "body": base64.b64encode(body).decode(),
    }
    answer = dispatch(lambda_app, tampered, None)  # 4xx returns normally: no Lambda retry
    assert answer["statusCode"] == 401


def test_non_envelope_event_is_a_permanent_400(lambda_app: Flask) -> None:
    answer = dispatch(lambda_app, aws_event("eventBridgeEvent"), None)
    assert answer["statusCode"] == 400


@pytest.mark.parametrize(
    "event",
    [
        {"requestContext": {"http": {}}},
        {
            "version": "2.0",
            "rawPath": "/healthz",
            "requestContext": {"http": {"method": "GET", "path": "/healthz"}},
        },
        {"httpMethod": "GET", "path": "/healthz", "requestContext": {}},
        {
            **as_http_event("apiGatewayProxyV2Event", "POST", "/webhooks/github", b"{}", {}),
            "isBase64Encoded": True,
            "body": "!!!not base64",
        },
    ],
)
def test_a_malformed_http_event_is_a_400_returned_not_raised(
    lambda_app: Flask, event: dict[str, Any]
) -> None:
    # Raising would make Lambda retry an event that can never be read.
    answer = dispatch(lambda_app, event, None)
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"])["error"] == "BAD_REQUEST"


def test_5xx_from_the_pass_through_route_raises_so_lambda_retries(make_settings: Any, tmp_path: Any) -> None:
    # GIVEN a worker whose database cannot be reached (a closed port)
    from function.app import create_app

    app = create_app(make_settings(database_url="mysql://u:p@127.0.0.1:9/blog"), invoker=RecordingInvoker())
    body = json.dumps(push_payload()).encode()
    standard = {
        "kind": "github-webhook",
        "event": "push",
        "delivery": "d-2",
        "signature": github_headers(body)["X-Hub-Signature-256"],
        "body": base64.b64encode(body).decode(),
    }
    # WHEN the envelope arrives through the pass-through path THEN the handler raises
    with pytest.raises(PassThroughFailed, match="503"):
        dispatch(app, standard, None)


def test_handler_builds_the_app_from_the_environment_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/h.db")
    # The start-up checks want a complete article source: a folder here, instead of the App's settings.
    monkeypatch.setenv("ARTICLE_SOURCE", f"dir:{tmp_path}")
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    monkeypatch.setattr(handler_module, "_app", None)
    event = as_http_event("apiGatewayProxyV2Event", "GET", "/healthz", b"", {})
    first = handler_module.handler(event, None)
    app = handler_module._app
    second = handler_module.handler(event, None)
    assert first["statusCode"] == second["statusCode"] == 200
    assert json.loads(first["body"]) == {"status": "ok"}
    assert handler_module._app is app
