"""The accept path with a real LambdaInvoker and real boto3 against moto: in process and over a socket.

moto accepts any payload size for an ``Event`` invocation, so the size logic (standard envelope, or the
compact one when the delivery does not fit Lambda's 1 MB asynchronous limit) is checked here on what
moto's own request recorder saw.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator

import moto
import pytest

from function.aws.dispatch import dispatch
from function.webhooks import envelope
from function.webhooks.envelope import KIND_COMPACT, KIND_STANDARD, PushRef
from tests.aws.conftest import AppMaker
from tests.aws.helpers import RecordedInvocation, create_function, post_push, push_body
from tests.conftest import FUNCTION_NAME
from tests.kit.deliveries import SECRET

Recording = Callable[[], list[RecordedInvocation]]
ACCEPTED = {"status": "accepted", "message": "Queued for async processing"}
EXPECTED_PUSH = PushRef(
    repository="octo/blog", branch="main", installation_id=1, after="a" * 40, repository_id=186853002
)


@pytest.fixture
def mocked_lambda() -> Iterator[None]:
    """moto in process, Docker off, with ``d-st-blog-api`` created."""
    with moto.mock_aws(config={"lambda": {"use_docker": False}}):
        create_function(FUNCTION_NAME)
        yield


def only_invocation(recording: Recording) -> RecordedInvocation:
    invocations = recording()
    assert len(invocations) == 1, invocations
    return invocations[0]


def test_push_is_accepted_and_queued_as_an_event_invocation_in_moto(
    mocked_lambda: None, moto_recording: Recording, make_lambda_app: AppMaker
) -> None:
    # GIVEN the app in Lambda mode, invoking d-st-blog-api through boto3 against moto
    client = make_lambda_app().test_client()
    body = push_body()

    # WHEN GitHub delivers a signed push to the tracked branch
    answer = post_push(client, body)

    # THEN GitHub gets 202 and moto served one asynchronous invocation of our function, carrying the
    # standard envelope with GitHub's raw body, which /events verifies
    assert answer.status_code == 202
    assert answer.get_json() == ACCEPTED
    invocation = only_invocation(moto_recording)
    assert invocation.function_name == FUNCTION_NAME
    assert invocation.invocation_type == "Event"
    sent = json.loads(invocation.payload)
    assert sent["kind"] == KIND_STANDARD
    assert base64.b64decode(sent["body"]) == body
    assert envelope.parse_and_verify(SECRET, invocation.payload).body == body


def test_push_is_accepted_end_to_end_over_a_real_socket(
    moto_server: str, moto_recording: Recording, make_lambda_app: AppMaker
) -> None:
    client = make_lambda_app(endpoint_url=moto_server).test_client()
    body = push_body()

    answer = post_push(client, body)

    assert answer.status_code == 202
    assert answer.get_json() == ACCEPTED
    invocation = only_invocation(moto_recording)
    assert (invocation.function_name, invocation.invocation_type) == (FUNCTION_NAME, "Event")
    assert envelope.parse_and_verify(SECRET, invocation.payload).body == body


def test_push_just_under_the_budget_is_sent_whole(
    moto_server: str, moto_recording: Recording, make_lambda_app: AppMaker
) -> None:
    # base64 grows a body by a third: 700 KB becomes ~933 KB, still inside the 1 MB limit
    client = make_lambda_app(endpoint_url=moto_server).test_client()
    body = push_body(700 * 1024)

    answer = post_push(client, body)

    assert answer.status_code == 202
    invocation = only_invocation(moto_recording)
    assert len(invocation.payload) <= envelope.PAYLOAD_BUDGET
    assert envelope.parse_and_verify(SECRET, invocation.payload).body == body


def test_800_kb_push_is_sent_as_a_compact_envelope_under_4_kb(
    moto_server: str, moto_recording: Recording, make_lambda_app: AppMaker
) -> None:
    # GIVEN a push of 800 KB: base64 makes it ~1.07 MB, over Lambda's 1 MB asynchronous limit
    client = make_lambda_app(endpoint_url=moto_server).test_client()
    body = push_body(800 * 1024)

    # WHEN it is delivered
    answer = post_push(client, body)

    # THEN it is accepted, and what reached Lambda is the compact envelope, small and signed by us
    assert answer.status_code == 202
    invocation = only_invocation(moto_recording)
    assert invocation.invocation_type == "Event"
    assert len(invocation.payload) < 4096
    assert json.loads(invocation.payload)["kind"] == KIND_COMPACT
    assert envelope.parse_and_verify(SECRET, invocation.payload).push == EXPECTED_PUSH


def test_25_mb_delivery_is_accepted_with_a_compact_envelope_that_the_worker_route_verifies(
    moto_server: str, moto_recording: Recording, make_lambda_app: AppMaker
) -> None:
    # GIVEN the largest delivery GitHub sends (25 MB)
    app = make_lambda_app(endpoint_url=moto_server)
    body = push_body(25 * 1024 * 1024)

    # WHEN it is delivered
    answer = post_push(app.test_client(), body)

    # THEN GitHub gets 202 and Lambda got the compact envelope, which carries what the worker needs
    assert answer.status_code == 202
    assert answer.get_json() == ACCEPTED
    invocation = only_invocation(moto_recording)
    assert len(invocation.payload) < 4096
    verified = envelope.parse_and_verify(SECRET, invocation.payload)
    assert verified.push == EXPECTED_PUSH
    assert verified.delivery == "72d3162e-cc78-11e3-81ab-4c9367dc0958"

    # AND posted as Lambda would deliver it (through the handler's pass-through), the envelope passes the
    # signature check, while the same envelope with one field changed is refused without a retry
    event = json.loads(invocation.payload)
    tampered = {**event, "push": {**event["push"], "repository": "evil/blog"}}
    refused = dispatch(app, tampered, None)
    assert refused["statusCode"] == 401
    assert refused["body"]["error"] == "UNAUTHORIZED"
