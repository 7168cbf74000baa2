"""Hostile input, property-based: whatever arrives at ``/webhooks/github`` or ``/events`` (random bytes,
random headers and content types, forged or misplaced signatures, JSON of the wrong shape, headers of
several KB), in inline mode and in Lambda mode, signed or not, the answer is JSON, never a 5xx, never a
traceback, and nothing is written. Runs on SQLite and MariaDB.

Every generated push is broken in at least one field the worker needs, or names an installation nobody is
registered for, so no example can legitimately sync; the recording invoker may only receive a payload for a
push whose signature is valid.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from flask import Flask
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from function.aws.dispatch import PASS_THROUGH_ENVIRON_KEY, dispatch
from function.store.backends import open_database
from function.store.models import Delivery
from function.webhooks.signature import sign
from tests.kit.blog_fixtures import Blog
from tests.kit.deliveries import SECRET, github_headers, push_payload
from tests.kit.github_fixtures import INSTALLATION_ID

# Examples per property and backend; the whole module stays well under a minute.
EXAMPLES = 120
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
WEBHOOK = "/webhooks/github"
EVENTS = "/events"

# -- strategies -------------------------------------------------------------------------------------

# Header values a real HTTP stack can carry: printable Latin-1, no line breaks; up to 8 KB.
header_text = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=40
)
oversized = st.builds(lambda s, n: (s or "x") * n, header_text, st.integers(100, 8192 // 2))
header_values = st.one_of(header_text, oversized)
header_names = st.from_regex(r"X-[A-Za-z0-9-]{1,20}", fullmatch=True)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(),
    st.text(max_size=20),
)
json_garbage = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=15,
)
not_a_string = json_garbage.filter(lambda v: not isinstance(v, str))
not_an_int = json_garbage.filter(lambda v: not isinstance(v, int) or isinstance(v, bool))
other_installation = st.one_of(
    st.integers().filter(lambda i: i != INSTALLATION_ID),
    st.integers(min_value=2**63, max_value=2**80),
    st.integers(max_value=-(2**63)),
)


@st.composite
def wrong_shape_pushes(draw: st.DrawFn) -> Any:
    """A push payload that can never sync: ``"ref": 5``, ``"installation": "x"``, no ``repository``,
    nested garbage... at least one needed field is broken, or the installation is nobody's."""
    payload: Any = push_payload(installation_id=INSTALLATION_ID)
    breakage = draw(
        st.sampled_from(
            [
                "ref",
                "installation",
                "installation_id",
                "no_installation",
                "repository",
                "no_repository",
                "full_name",
                "unknown_installation",
                "not_an_object",
            ]
        )
    )
    if breakage == "ref":
        payload["ref"] = draw(not_a_string)
    elif breakage == "installation":
        payload["installation"] = draw(json_garbage.filter(lambda v: not isinstance(v, dict)))
    elif breakage == "installation_id":
        payload["installation"] = {"id": draw(not_an_int)}
    elif breakage == "no_installation":
        del payload["installation"]
    elif breakage == "repository":
        payload["repository"] = draw(json_garbage.filter(lambda v: not isinstance(v, dict)))
    elif breakage == "no_repository":
        del payload["repository"]
    elif breakage == "full_name":
        payload["repository"]["full_name"] = draw(
            st.one_of(not_a_string, st.text(max_size=30).filter(lambda s: "/" not in s))
        )
    elif breakage == "unknown_installation":
        payload["installation"] = {"id": draw(other_installation)}
    else:
        return draw(json_garbage.filter(lambda v: not isinstance(v, dict)))
    # Nested garbage anywhere else in the payload.
    for key in draw(
        st.lists(st.sampled_from(["commits", "pusher", "sender", "head_commit", "after", "x"]), max_size=3)
    ):
        payload[key] = draw(json_garbage)
    return payload


def encode(payload: Any, form: bool) -> bytes:
    text = json.dumps(payload)
    return urlencode({"payload": text}).encode() if form else text.encode()


bodies = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=500).map(str.encode),
    json_garbage.map(lambda v: json.dumps(v).encode()),
    st.builds(encode, wrong_shape_pushes(), st.booleans()),
    st.binary(max_size=200).map(lambda b: b"payload=" + b),
)
content_types = st.one_of(
    st.sampled_from(
        [
            "application/json",
            "application/x-www-form-urlencoded",
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin-1",
            "",
        ]
    ),
    header_text,
)
events = st.one_of(st.sampled_from(["push", "ping", "installation", "", "PUSH"]), header_values)


@st.composite
def signatures(draw: st.DrawFn, body: bytes) -> tuple[str | None, bool]:
    """A signature header for ``body`` and whether it is the valid one."""
    kind = draw(st.sampled_from(["none", "random", "hex", "valid", "other_secret", "other_body", "sha1"]))
    if kind == "none":
        return None, False
    if kind == "random":
        return draw(header_values), False
    if kind == "hex":
        return "sha256=" + draw(st.binary(min_size=32, max_size=32)).hex(), False
    if kind == "valid":
        return sign(SECRET, body), True
    if kind == "other_secret":
        return sign(SECRET + "x", body), False
    if kind == "other_body":
        return sign(SECRET, body + b" "), False
    return "sha1=" + hashlib.sha1(body, usedforsecurity=False).hexdigest(), False


@st.composite
def webhook_requests(draw: st.DrawFn) -> tuple[bytes, dict[str, str], bool]:
    """(body, headers, validly signed)."""
    body = draw(bodies)
    signature, valid = draw(signatures(body))
    headers = draw(st.dictionaries(header_names, header_values, max_size=4))
    headers["Content-Type"] = draw(content_types)
    if draw(st.booleans()):
        headers["X-GitHub-Event"] = draw(events)
    if draw(st.booleans()):
        headers["X-GitHub-Delivery"] = draw(st.one_of(st.uuids().map(str), header_values))
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return body, headers, valid


def sign_compact(fields: dict[str, Any], secret: str = SECRET) -> str:
    """The compact form's signature: HMAC-SHA256 over canonical JSON of the other fields."""
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return "sha256=" + hmac.new(secret.encode(), canonical, hashlib.sha256).hexdigest()


@st.composite
def envelopes(draw: st.DrawFn) -> Any:
    """Anything that might be posted to /events: garbage, and envelopes of both forms, forged or
    validly signed around a push that can never sync."""
    kind = draw(st.sampled_from(["garbage", "standard", "compact"]))
    if kind == "garbage":
        return draw(json_garbage)
    fields: dict[str, Any] = {
        "event": draw(st.one_of(st.just("push"), json_garbage)),
        "delivery": draw(st.one_of(st.text(max_size=50), json_garbage)),
    }
    if draw(st.booleans()):
        fields["receivedAt"] = draw(st.one_of(st.just("2026-01-01T00:00:00Z"), json_garbage))
    if kind == "standard":
        fields["kind"] = "github-webhook"
        body = draw(bodies)
        fields["body"] = draw(
            st.one_of(st.just(base64.b64encode(body).decode()), st.text(max_size=30), json_garbage)
        )
        signature, _ = draw(signatures(body))
        if signature is not None:
            fields["signature"] = signature
        return fields
    fields["kind"] = draw(st.sampled_from(["github-webhook-compact", "github-webhook-compact "]))
    fields["push"] = draw(
        st.one_of(
            json_garbage,
            st.fixed_dictionaries(
                {
                    "repository": st.one_of(st.just("octo/blog"), json_garbage),
                    "branch": st.one_of(st.just("main"), json_garbage),
                    "installationId": st.one_of(other_installation, not_an_int),
                    "after": st.one_of(st.none(), st.text(max_size=40), json_garbage),
                }
            ),
        )
    )
    if draw(st.booleans()):
        fields["signature"] = sign_compact(fields)
    else:
        fields["signature"] = draw(st.one_of(header_text, json_garbage))
    return fields


# -- what must hold for every answer ----------------------------------------------------------------


def assert_clean_answer(status: int, body: bytes) -> Any:
    """JSON, no 5xx, no traceback; a 4xx is exactly ``{"error", "message"}``. Returns the JSON."""
    text = body.decode("utf-8", "replace")
    assert status < 500, f"{status}: {text[:300]}"
    assert "Traceback" not in text and 'File "' not in text, text[:300]
    data = json.loads(text)
    if status >= 400:
        assert set(data) == {"error", "message"}, data
        assert isinstance(data["error"], str) and data["error"].isupper()
        assert isinstance(data["message"], str) and data["message"]
    return data


class WriteCounter:
    """Counts the rows a delivery could write, on one connection kept open for the whole property (a
    connection per example would cost more than the example)."""

    def __init__(self, db_url: str) -> None:
        self.db = open_database(db_url)
        self.db.connect()

    def rows(self) -> tuple[int, int]:
        sql = "SELECT (SELECT COUNT(*) FROM deliveries), (SELECT COUNT(*) FROM articles)"
        deliveries, articles = self.db.execute_sql(sql).fetchone()
        return int(deliveries), int(articles)

    def assert_nothing_written(self) -> None:
        assert self.rows() == (0, 0), "a hostile request wrote to the database"

    def assert_nothing_synced(self) -> None:
        """No article written; the only rows allowed are failed deliveries from an installation nobody
        holds (a signed push is recorded so `blog-api deliveries` shows why nothing synced)."""
        refusal = (Delivery.outcome == "failed") & Delivery.error.startswith("unknown installation ")
        assert self.rows()[1] == 0, "a hostile request wrote an article"
        others = Delivery.select().where(~refusal | Delivery.error.is_null()).bind(self.db).count()
        assert others == 0, "a hostile request recorded more than its refusal"


@pytest.fixture
def writes(blog: Blog, db_url: str) -> Iterator[WriteCounter]:
    counter = WriteCounter(db_url)
    yield counter
    counter.db.close()


# -- the properties ---------------------------------------------------------------------------------


@FUZZ
@given(request=webhook_requests())
def test_webhook_in_inline_mode_answers_json_without_5xx_and_writes_nothing(
    blog: Blog, writes: WriteCounter, request: tuple[bytes, dict[str, str], bool]
) -> None:
    # GIVEN any request to the webhook of the app that processes inline
    body, headers, _ = request
    # WHEN it is posted
    answer = blog.client.post(WEBHOOK, data=body, headers=headers)
    # THEN the answer is clean JSON and nothing reached the database
    assert_clean_answer(answer.status_code, answer.get_data())
    writes.assert_nothing_written()


@FUZZ
@given(request=webhook_requests())
def test_webhook_in_lambda_mode_answers_json_without_5xx_and_queues_only_signed_pushes(
    blog: Blog, writes: WriteCounter, request: tuple[bytes, dict[str, str], bool]
) -> None:
    # GIVEN any request to the webhook of the function on Lambda
    body, headers, valid = request
    queued = len(blog.invoker.payloads)
    # WHEN it is posted
    answer = blog.lambda_app().test_client().post(WEBHOOK, data=body, headers=headers)
    # THEN the answer is clean JSON, and only a validly signed push was handed to the worker
    data = assert_clean_answer(answer.status_code, answer.get_data())
    if len(blog.invoker.payloads) > queued:
        assert valid and answer.status_code == 202 and data["status"] == "accepted"
    delivery = next((v for k, v in headers.items() if k.lower() == "x-github-delivery"), "")
    if delivery and not _is_uuid(delivery):
        # not GitHub's shape: refused before anything else is looked at
        assert answer.status_code == 400 and data["error"] == "BAD_REQUEST"
    elif not valid:
        assert answer.status_code == 401 and data["error"] == "UNAUTHORIZED"
    writes.assert_nothing_written()


def _is_uuid(text: str) -> bool:
    try:
        return len(text) == 36 and bool(uuid.UUID(text))
    except ValueError:
        return False


@FUZZ
@given(
    event=envelopes(),
    raw=st.one_of(st.none(), st.binary(max_size=500)),
    headers=st.dictionaries(header_names, header_values, max_size=3),
)
def test_events_in_inline_mode_answers_json_without_5xx_and_writes_nothing(
    blog: Blog, writes: WriteCounter, event: Any, raw: bytes | None, headers: dict[str, str]
) -> None:
    # GIVEN anything posted to /events over HTTP in inline mode (local development)
    body = raw if raw is not None else json.dumps(event).encode()
    # WHEN it is posted
    answer = blog.client.post(EVENTS, data=body, headers=headers, content_type="application/json")
    # THEN the answer is clean JSON and nothing reached the database
    assert_clean_answer(answer.status_code, answer.get_data())
    writes.assert_nothing_written()


@FUZZ
@given(event=envelopes(), headers=st.dictionaries(header_names, header_values, max_size=3))
def test_events_over_http_in_lambda_mode_is_always_forbidden(
    blog: Blog, writes: WriteCounter, event: Any, headers: dict[str, str]
) -> None:
    # GIVEN anything, validly signed or not, sent to /events over HTTP (API Gateway) on Lambda
    # WHEN it is posted
    answer = (
        blog.lambda_app()
        .test_client()
        .post(EVENTS, data=json.dumps(event).encode(), headers=headers, content_type="application/json")
    )
    # THEN it is refused before the envelope is even read
    data = assert_clean_answer(answer.status_code, answer.get_data())
    assert answer.status_code == 403 and data["error"] == "FORBIDDEN"
    writes.assert_nothing_written()


@FUZZ
@given(event=envelopes())
def test_any_event_through_the_pass_through_is_answered_4xx_or_2xx_and_writes_nothing(
    blog: Blog, writes: WriteCounter, event: Any
) -> None:
    # GIVEN any non-HTTP event reaching the Lambda handler
    # WHEN the handler posts it to the pass-through route
    result = dispatch(blog.lambda_app(), event, None)  # a 5xx would raise PassThroughFailed
    # THEN it was answered without a retry-worthy failure, and nothing was written
    assert result["statusCode"] < 500
    assert_clean_answer(result["statusCode"], json.dumps(result["body"]).encode())
    writes.assert_nothing_written()


@FUZZ
@example(name="0/", slug="x", params={}, keep_slash="/")  # "//": was Werkzeug's HTML redirect page
@given(
    name=st.text(min_size=1, max_size=300),
    slug=st.text(min_size=1, max_size=300),
    params=st.dictionaries(st.sampled_from(["type", "tag", "x"]), st.text(max_size=300), max_size=3),
    keep_slash=st.sampled_from(["", "/"]),
)
def test_read_routes_answer_json_without_5xx_for_any_name_slug_or_filter(
    blog: Blog, name: str, slug: str, params: dict[str, str], keep_slash: str
) -> None:
    # GIVEN any user name, slug and filters WHEN the read routes are asked THEN the answer is clean JSON
    # Percent-encoded as any HTTP client would; a "/" inside stays raw half of the time.
    name, slug = quote(name, safe=keep_slash), quote(slug, safe=keep_slash)
    for path in (f"/users/{name}/articles", f"/users/{name}/articles/{slug}"):
        answer = blog.client.get(path, query_string=params)
        assert_clean_answer(answer.status_code, answer.get_data())


def test_pass_through_environ_key_cannot_be_set_by_an_http_header(blog: Blog) -> None:
    # GIVEN a validly signed envelope sent over HTTP on Lambda with a header named like the environ key
    body = b'{"ref": "refs/heads/main"}'
    event = {
        "kind": "github-webhook",
        "event": "push",
        "delivery": "x",
        "signature": sign(SECRET, body),
        "body": base64.b64encode(body).decode(),
    }
    app: Flask = blog.lambda_app()
    answer = app.test_client().post(
        EVENTS, json=event, headers={PASS_THROUGH_ENVIRON_KEY: "1", "Blog-Api.Pass-Through": "1"}
    )
    # THEN it is still refused: only the handler's pass-through sets the environ key
    assert answer.status_code == 403
    assert copy.deepcopy(answer.get_json())["error"] == "FORBIDDEN"


# -- signed but hostile: what only a holder of the secret could send, still never a 5xx --------------

SIGNED = settings(FUZZ, max_examples=60)
FORM = "application/x-www-form-urlencoded"


@SIGNED
@given(payload=wrong_shape_pushes(), form=st.booleans(), delivery_id=header_values)
def test_signed_push_of_the_wrong_shape_is_refused_in_both_modes_and_syncs_nothing(
    blog: Blog, writes: WriteCounter, payload: Any, form: bool, delivery_id: str
) -> None:
    # GIVEN a validly signed push whose JSON can never sync (wrong types, missing fields, nobody's
    # installation, installation ids far outside any integer column); only the refusal of nobody's
    # installation is recorded
    body = encode(payload, form)
    headers = github_headers(body, delivery=delivery_id, content_type=FORM if form else "application/json")

    # WHEN it is delivered inline THEN it is refused with a clean 4xx (or skipped)
    inline = blog.client.post(WEBHOOK, data=body, headers=headers)
    assert_clean_answer(inline.status_code, inline.get_data())
    assert inline.status_code in (200, 400, 422)

    # WHEN it is delivered on Lambda THEN the accept path answers cleanly, and whatever it queued is
    # refused by the pass-through route with a 4xx (no retry), never a 5xx
    queued = len(blog.invoker.payloads)
    accepted = blog.lambda_app().test_client().post(WEBHOOK, data=body, headers=headers)
    assert_clean_answer(accepted.status_code, accepted.get_data())
    for event in blog.invoker.payloads[queued:]:
        result = dispatch(blog.lambda_app(), json.loads(event), None)
        assert_clean_answer(result["statusCode"], json.dumps(result["body"]).encode())
    writes.assert_nothing_synced()


@SIGNED
@given(
    push=st.fixed_dictionaries(
        {
            "repository": st.one_of(st.just("octo/blog"), json_garbage),
            "branch": st.one_of(st.just("main"), json_garbage),
            "installationId": st.one_of(other_installation, not_an_int),
        },
        optional={"after": st.one_of(st.none(), st.text(max_size=40), json_garbage)},
    ),
    delivery_id=st.one_of(header_values, json_garbage),
)
def test_signed_compact_envelope_of_the_wrong_shape_is_a_4xx_and_syncs_nothing(
    blog: Blog, writes: WriteCounter, push: dict[str, Any], delivery_id: Any
) -> None:
    # GIVEN a compact envelope signed with the secret around a push that can never sync
    fields: dict[str, Any] = {
        "kind": "github-webhook-compact",
        "event": "push",
        "delivery": delivery_id,
        "push": push,
    }
    fields["signature"] = sign_compact(fields)
    # WHEN the handler passes it through THEN it is refused with a 4xx (a 5xx would raise)
    result = dispatch(blog.lambda_app(), fields, None)
    assert 400 <= result["statusCode"] < 500
    assert_clean_answer(result["statusCode"], json.dumps(result["body"]).encode())
    writes.assert_nothing_synced()


@settings(FUZZ, max_examples=25)
@given(delivery_id=header_values, content_type=st.sampled_from(["application/json", FORM]))
def test_signed_valid_push_with_hostile_headers_is_processed_without_5xx(
    blog: Blog, delivery_id: str, content_type: str
) -> None:
    # GIVEN a valid signed push from the registered installation with a delivery id of any length
    blog.github.set_files({})
    payload = push_payload(installation_id=INSTALLATION_ID)
    body = encode(payload, content_type == FORM)
    headers = github_headers(body, delivery=delivery_id, content_type=content_type)
    # WHEN it is delivered inline and on Lambda THEN both are processed, never a 5xx
    inline = blog.client.post(WEBHOOK, data=body, headers=headers)
    assert_clean_answer(inline.status_code, inline.get_data())
    assert inline.status_code == 200
    accepted = blog.lambda_app().test_client().post(WEBHOOK, data=body, headers=headers)
    assert accepted.status_code == 202
    result = dispatch(blog.lambda_app(), json.loads(blog.invoker.payloads[-1]), None)
    assert result["statusCode"] == 200


@st.composite
def forged_signatures(draw: st.DrawFn, body: bytes) -> str | None:
    signature, _ = draw(signatures(body).filter(lambda s: not s[1]))
    return signature


@SIGNED
@given(data=st.data(), form=st.booleans(), where=st.sampled_from(["webhook", "events", "pass-through"]))
def test_valid_push_with_a_forged_signature_is_refused_401_everywhere_and_writes_nothing(
    blog: Blog, writes: WriteCounter, data: st.DataObject, form: bool, where: str
) -> None:
    # GIVEN a push that would sync (the registered installation, the tracked branch) but whose
    # signature is missing, random, of another body or made with another secret
    blog.github.set_files({"articles/a.md": b"---\ntitle: A\npublish: true\n---\nA\n"})
    body = encode(push_payload(installation_id=INSTALLATION_ID), form)
    signature = data.draw(forged_signatures(body))
    if where == "webhook":
        # WHEN it is posted to the inline webhook
        headers = github_headers(body, content_type=FORM if form else "application/json")
        headers.pop("X-Hub-Signature-256")
        if signature is not None:
            headers["X-Hub-Signature-256"] = signature
        answer = blog.client.post(WEBHOOK, data=body, headers=headers)
        status, raw = answer.status_code, answer.get_data()
    else:
        # WHEN it arrives at /events as a standard or compact envelope, over HTTP in inline mode or
        # through the Lambda handler's pass-through
        if data.draw(st.booleans()):
            event: dict[str, Any] = {"kind": "github-webhook", "event": "push", "delivery": "forged"}
            event["body"] = base64.b64encode(body).decode()
        else:
            event = {"kind": "github-webhook-compact", "event": "push", "delivery": "forged"}
            event["push"] = {"repository": "octo/blog", "branch": "main", "installationId": INSTALLATION_ID}
        if signature is not None:
            event["signature"] = signature
        if where == "events":
            answer = blog.client.post(EVENTS, json=event)
            status, raw = answer.status_code, answer.get_data()
        else:
            result = dispatch(blog.lambda_app(), event, None)
            status, raw = result["statusCode"], json.dumps(result["body"]).encode()
    # THEN it is refused as unauthorized and nothing was written
    assert status == 401, raw
    assert assert_clean_answer(status, raw)["error"] == "UNAUTHORIZED"
    writes.assert_nothing_written()


def test_a_signed_envelope_whose_delivery_id_does_not_fit_is_a_400_not_a_database_error(
    blog: Blog, writes: WriteCounter
) -> None:
    # GIVEN a compact envelope signed with our secret, for the registered installation, whose
    # delivery id is longer than the deliveries table holds (MariaDB would refuse the row: a 500, and
    # Lambda retrying an event that can never succeed)
    from function.webhooks.envelope import DELIVERY_ID_MAX_CHARS, PushRef, build_compact

    push = PushRef(repository="octo/blog", branch="main", installation_id=INSTALLATION_ID)
    event = build_compact(
        secret=SECRET, event="push", delivery="x" * (DELIVERY_ID_MAX_CHARS + 1), push=push, received_at=""
    )

    # WHEN Lambda passes it through THEN it is refused for good, and nothing is written
    result = dispatch(blog.lambda_app(), json.loads(event), None)
    assert result["statusCode"] == 400
    writes.assert_nothing_written()
