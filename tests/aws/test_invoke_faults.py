"""AWS faults on the self-invoke, injected by a local Lambda API stand-in: GitHub always gets an answer
well within its 10 s limit — 503 when the delivery could not be queued, so it can be redelivered."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import closing

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from werkzeug.test import TestResponse

from function.aws.invoker import LambdaInvoker, lambda_client_factory
from function.webhooks import envelope
from function.webhooks.envelope import KIND_COMPACT, KIND_STANDARD
from tests.aws.conftest import AppMaker
from tests.aws.helpers import post_push, push_body
from tests.aws.lambda_stand_in import LambdaApiStandIn
from tests.conftest import FUNCTION_NAME
from tests.kit.deliveries import SECRET

StandInMaker = Callable[..., LambdaApiStandIn]
GITHUB_LIMIT_S = 10.0
MAX_ATTEMPTS = 3  # the invoker's retry budget: 3 attempts in all


def assert_unavailable(answer: TestResponse) -> None:
    assert answer.status_code == 503
    body = answer.get_json()
    assert body["error"] == "UNAVAILABLE"
    assert body["message"]


def timed_push(
    app_maker: AppMaker, endpoint_url: str, body: bytes | None = None, **client: str
) -> tuple[TestResponse, float]:
    app = app_maker(endpoint_url=endpoint_url, **client)
    started = time.perf_counter()
    answer = post_push(app.test_client(), body if body is not None else push_body())
    return answer, time.perf_counter() - started


def test_throttled_invoke_answers_503_within_a_few_seconds_after_at_most_three_attempts(
    make_stand_in: StandInMaker, make_lambda_app: AppMaker
) -> None:
    # GIVEN a Lambda API that throttles every call (429 TooManyRequestsException)
    api = make_stand_in(throttle=True)

    # WHEN a push is delivered
    answer, elapsed = timed_push(make_lambda_app, api.url)

    # THEN GitHub gets 503 UNAVAILABLE (a failure it can redeliver), fast, after the retry budget
    assert_unavailable(answer)
    assert len(api.calls) == MAX_ATTEMPTS
    assert all(call.invocation_type == "Event" and call.function_name == FUNCTION_NAME for call in api.calls)
    assert elapsed < 5.0, f"503 took {elapsed:.2f} s"


def test_payload_refused_as_too_large_is_retried_once_with_the_compact_envelope(
    make_stand_in: StandInMaker, make_lambda_app: AppMaker
) -> None:
    # GIVEN a Lambda API that counts sizes differently from us and refuses more than 128 KB (413)
    api = make_stand_in(max_payload=128 * 1024)
    body = push_body(200 * 1024)  # its standard envelope (~270 KB) fits our 1 MB budget, not this API

    # WHEN the push is delivered
    answer, _ = timed_push(make_lambda_app, api.url, body)

    # THEN it is accepted: exactly two calls, the standard envelope refused, then the compact one taken
    assert answer.status_code == 202
    assert len(api.calls) == 2
    first, second = api.calls
    assert len(first.body) > 128 * 1024
    assert json.loads(first.body)["kind"] == KIND_STANDARD
    assert len(second.body) < 4096
    assert json.loads(second.body)["kind"] == KIND_COMPACT
    assert envelope.parse_and_verify(SECRET, second.body).push is not None


def test_invoke_endpoint_that_never_answers_gives_503_within_githubs_limit(
    make_stand_in: StandInMaker, make_lambda_app: AppMaker
) -> None:
    # GIVEN a Lambda API that accepts the connection and never answers
    api = make_stand_in(hang=True)

    # WHEN a push is delivered
    answer, elapsed = timed_push(make_lambda_app, api.url)

    # THEN the read time-out ends each attempt and GitHub gets 503 well before its 10 s are up
    assert_unavailable(answer)
    assert len(api.calls) == MAX_ATTEMPTS
    assert elapsed < GITHUB_LIMIT_S * 0.8, f"503 took {elapsed:.2f} s after {len(api.calls)} attempts"


def test_refused_invoke_endpoint_gives_503_fast(refused_port: int, make_lambda_app: AppMaker) -> None:
    answer, elapsed = timed_push(make_lambda_app, f"http://127.0.0.1:{refused_port}")

    assert_unavailable(answer)
    assert elapsed < 2.0, f"503 took {elapsed:.2f} s"


@pytest.mark.parametrize(
    ("behaviour", "status", "code"),
    [
        ({"throttle": True}, 429, "TooManyRequestsException"),
        ({"max_payload": 0}, 413, "RequestEntityTooLargeException"),
    ],
)
def test_stand_in_faults_reach_boto3_as_lambdas_own_errors(
    make_stand_in: StandInMaker, behaviour: dict[str, object], status: int, code: str
) -> None:
    """The tests above are about our handling of Lambda's errors, not about a malformed answer."""
    api = make_stand_in(**behaviour)
    no_retries = Config(retries={"mode": "standard", "total_max_attempts": 1})
    with closing(boto3.client("lambda", endpoint_url=api.url, config=no_retries)) as client:
        with pytest.raises(ClientError) as raised:
            client.invoke(FunctionName=FUNCTION_NAME, InvocationType="Event", Payload=b"{}")
    assert raised.value.response["Error"]["Code"] == code
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == status


def test_self_invoke_targets_the_configured_alias(make_stand_in: Callable[..., LambdaApiStandIn]) -> None:
    # GIVEN an invoker for the alias "live" (SnapStart: only published versions have a snapshot)
    stand_in = make_stand_in()
    aliased = LambdaInvoker(
        "d-st-blog-api", lambda: lambda_client_factory(endpoint_url=stand_in.url), qualifier="live"
    )
    plain = LambdaInvoker("d-st-blog-api", lambda: lambda_client_factory(endpoint_url=stand_in.url))

    # WHEN each queues a delivery
    aliased.invoke(b"{}")
    plain.invoke(b"{}")

    # THEN the first reached the alias, the second the function itself
    assert [(c.function_name, c.qualifier) for c in stand_in.calls] == [
        ("d-st-blog-api", "live"),
        ("d-st-blog-api", None),
    ]
