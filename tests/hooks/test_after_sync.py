"""A push, end to end, tells the front end: one signed request per endpoint after the sync's commit, on
the worker's asynchronous path (after the answer in inline mode), retried by the scheduled sweep."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from werkzeug.serving import make_server

from function.aws.dispatch import dispatch
from function.errors import PassThroughFailed
from function.hooks.dispatch import HookTiming
from function.hooks.guard import AddressPolicy
from function.hooks.signing import new_secret
from function.hooks.transport import Transport
from function.hooks.wiring import HookParts
from function.ogp.images import ogp_images
from function.store.hooks import HookStore
from function.store.models import HookEvent, utc_now
from shared.names import SCHEDULED_REDELIVERY_KIND
from tests.kit.blog_checks import blob_path
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.deliveries import delivery_uuid, github_headers
from tests.kit.fakes import FakeClock
from tests.kit.hook_deliveries import HookDeliveries
from tests.kit.statements import count_statements
from tests.kit.webhook_receiver import WebhookReceiver, answer, block, verify


@pytest.fixture
def told(blog: Blog, clock: FakeClock) -> Blog:
    """The blog, sending its webhooks over loopback (as outside Lambda) on the test's clock."""
    transport = Transport(AddressPolicy(allow_loopback=True), connect_timeout_s=0.5, total_timeout_s=1.0)
    blog.hook_parts = HookParts(transport, timing=HookTiming(now=clock.now, sleep=clock.sleep))
    return blog


def register(blog: Blog, url: str, events: tuple[str, ...] = ("articles.changed", "sync.failed")) -> str:
    secret = new_secret()
    with blog.store() as store:
        user = store.get_user(USER)
        assert user is not None
        HookStore(store.db).add_endpoint(user.id, url, events, secret, utc_now())
    return secret


def events_stored(blog: Blog) -> int:
    with blog.store() as store:
        return int(HookEvent.select().bind(store.db).count())


def test_a_push_that_changes_an_article_makes_one_signed_request_to_each_endpoint(
    told: Blog, receiver: WebhookReceiver
) -> None:
    secrets = [register(told, receiver.url("/a")), register(told, receiver.url("/b"))]
    told.commit({"articles/hello.md": article("Hello"), "articles/draft.md": article("Draft", publish=False)})

    result = told.deliver_via_lambda(delivery="push-1")

    assert result["statusCode"] == 200
    requests = sorted(receiver.received, key=lambda r: r.path)
    assert [r.path for r in requests] == ["/a", "/b"]
    for request, secret in zip(requests, secrets, strict=True):
        body = verify(request, secret)
        assert body["type"] == "articles.changed"
        assert [a["slug"] for a in body["data"]["published"]] == ["hello"]  # the draft is not seen
        assert body["data"]["headSha"] == told.github.head(repo="octo/blog")


def test_a_push_that_changes_nothing_readers_see_sends_nothing(told: Blog, receiver: WebhookReceiver) -> None:
    register(told, receiver.url())
    told.commit({"articles/hello.md": article("Hello")})
    told.deliver_via_lambda(delivery="first")
    told.commit({"notes.txt": b"not an article", "articles/draft.md": article("Draft", publish=False)})

    with count_statements(told.db) as seen:
        told.deliver_via_lambda(delivery="second")

    assert len(receiver.received) == 1
    assert events_stored(told) == 1
    # not even a look at the endpoints
    assert seen.count > 0 and not [s for s in seen.statements if "hook_" in s]


def test_a_sync_that_fails_tells_sync_failed_with_what_it_committed(
    told: Blog, receiver: WebhookReceiver
) -> None:
    secret = register(told, receiver.url())
    bad = article("Bad")
    told.commit({"articles/good.md": article("Good"), "articles/bad.md": bad})
    told.github.fail(blob_path(bad), 502, times=None)

    with pytest.raises(PassThroughFailed):
        told.deliver_via_lambda(delivery="flaky")  # 5xx: Lambda will retry the delivery

    bodies = {b["type"]: b for b in (verify(r, secret) for r in receiver.received)}
    assert set(bodies) == {"articles.changed", "sync.failed"}
    assert [a["slug"] for a in bodies["articles.changed"]["data"]["published"]] == ["good"]
    failed = bodies["sync.failed"]["data"]
    assert failed["delivery"] == delivery_uuid("flaky") and failed["failedPaths"] == ["articles/bad.md"]
    assert failed["reason"] == "files could not be fetched"


def test_the_scheduled_sweep_sends_a_retry_that_became_due(
    told: Blog, receiver: WebhookReceiver, clock: FakeClock, hook_deliveries: HookDeliveries
) -> None:
    # GIVEN a front end down for the push and its 5 s retry
    secret = register(told, receiver.url())
    receiver.script = [answer(503), answer(503)]
    told.commit({"articles/hello.md": article("Hello")})
    told.deliver_via_lambda(delivery="push-1")
    assert len(receiver.received) == 2

    # WHEN the schedule fires once the next retry is due
    clock.advance(timedelta(minutes=2))
    swept = dispatch(told.lambda_app(), {"kind": SCHEDULED_REDELIVERY_KIND}, None)

    # THEN the retry went out, and the front end got the change
    assert swept["statusCode"] == 200
    assert len(receiver.received) == 3
    assert verify(receiver.received[-1], secret)["data"]["published"][0]["slug"] == "hello"


def test_on_lambda_a_url_that_resolves_to_loopback_is_never_called(
    blog: Blog, receiver: WebhookReceiver
) -> None:
    # GIVEN the webhooks as deployed (the settings' Lambda mode), and an endpoint on loopback
    register(blog, receiver.url())
    blog.commit({"articles/hello.md": article("Hello")})

    blog.deliver_via_lambda(delivery="push-1")

    # THEN nothing reached it; the attempt is recorded as refused
    assert receiver.received == []
    with blog.store() as store:
        [attempt] = HookStore(store.db).attempts(limit=1)
    assert attempt.error is not None and attempt.error.startswith("refused:") and "loopback" in attempt.error


@pytest.fixture
def served(blog: Blog) -> Iterator[str]:
    """The inline-mode app on a real HTTP server on loopback (as ``make run`` serves it), its webhooks
    sent over loopback with a long time-out (the test decides when the front end answers)."""
    transport = Transport(AddressPolicy(allow_loopback=True), connect_timeout_s=2, total_timeout_s=30)
    blog.hook_parts = HookParts(transport)
    server = make_server("127.0.0.1", 0, blog.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def attempts_made(blog: Blog) -> list[Any]:
    with blog.store() as store:
        return HookStore(store.db).attempts()


def test_inline_mode_answers_github_before_any_webhook_is_answered(
    blog: Blog, receiver: WebhookReceiver, served: str
) -> None:
    # GIVEN a front end that holds every request until the test lets it answer
    secret = register(blog, receiver.url())
    release = threading.Event()
    receiver.then = block(release)
    blog.commit({"articles/hello.md": article("Hello")})
    body = blog.push_body()

    # WHEN GitHub delivers the push to the inline app
    url = f"{served}/webhooks/github"
    request = urllib.request.Request(url, data=body, headers=github_headers(body))  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=20) as response:  # noqa: S310 - loopback
        answered = json.loads(response.read())

    # THEN GitHub had its answer while the webhook was still waiting for the front end
    assert answered["status"] == "processed" and answered["written"] == 1
    assert attempts_made(blog) == []
    release.set()
    [got] = receiver.wait_for(1)
    assert verify(got, secret)["data"]["published"][0]["slug"] == "hello"
    deadline = time.monotonic() + 10
    while not attempts_made(blog) and time.monotonic() < deadline:
        time.sleep(0.05)
    [attempt] = attempts_made(blog)
    assert attempt.ok and attempt.status_code == 200


def test_each_changed_article_carries_the_share_image_the_read_api_serves(
    told: Blog, receiver: WebhookReceiver
) -> None:
    told.settings = replace(told.settings, ogp_default_image_url="https://blog.kumo-corp.jp/og.png")
    told.hook_parts = replace(told.hook_parts, ogp=ogp_images(told.settings))
    secret = register(told, receiver.url())
    photo = b"---\ntitle: Photo\npublish: true\nthumbnail: https://img.kumo-corp.jp/p.png\n---\n\nHi.\n"
    told.commit({"articles/hello.md": article("Hello"), "articles/photo.md": photo})

    told.deliver_via_lambda(delivery="push-1")

    (request,) = receiver.received
    published = {ref["slug"]: ref["ogpUrl"] for ref in verify(request, secret)["data"]["published"]}
    assert published == {
        "hello": "https://blog.kumo-corp.jp/og.png",
        "photo": "https://img.kumo-corp.jp/p.png",
    }
    assert published == {entry["slug"]: entry["ogpUrl"] for entry in told.articles()}
