"""``articles.changed`` naming the Zenn books a sync changed, valid against the published schema."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import jsonschema
import pytest

from function.hooks import events
from function.hooks.dispatch import HookTiming
from function.hooks.guard import AddressPolicy
from function.hooks.schema import EVENT_SCHEMA
from function.hooks.signing import new_secret
from function.hooks.transport import Transport
from function.hooks.wiring import HookParts
from function.store.hooks import HookStore
from function.store.models import utc_now
from tests.kit.blog_fixtures import USER, Blog
from tests.kit.fakes import FakeClock
from tests.kit.webhook_receiver import WebhookReceiver, verify


def _body(data: dict[str, object]) -> dict[str, object]:
    return json.loads(events.body(events.ARTICLES_CHANGED, datetime(2026, 12, 4, tzinfo=UTC), data))


def test_changed_books_are_named_with_their_addresses() -> None:
    data = events.articles_changed(
        "alice",
        published=[],
        updated=["hello"],
        unpublished=[],
        head_sha="abc",
        site_url="https://blog.example.com",
        books={"published": ["lambda-field-notes"], "updated": [], "unpublished": []},
    )

    assert data["books"] == {
        "published": [
            {
                "slug": "lambda-field-notes",
                "url": "https://blog.example.com/books/lambda-field-notes",
                "apiPath": "/users/alice/books/lambda-field-notes",
            }
        ],
        "updated": [],
        "unpublished": [],
    }
    jsonschema.validate(_body(data), EVENT_SCHEMA)


def test_no_book_change_leaves_books_out() -> None:
    data = events.articles_changed(
        "alice", published=["a"], updated=[], unpublished=[], head_sha=None, site_url=None, books={}
    )

    assert "books" not in data
    jsonschema.validate(_body(data), EVENT_SCHEMA)


def test_two_pending_events_merge_their_books() -> None:
    older = events.articles_changed(
        "alice",
        published=["a"],
        updated=[],
        unpublished=[],
        head_sha="1",
        site_url=None,
        books={"published": ["book-one-slug"], "updated": [], "unpublished": []},
    )
    newer = events.articles_changed(
        "alice",
        published=[],
        updated=[],
        unpublished=[],
        head_sha="2",
        site_url=None,
        books={"published": [], "updated": ["book-one-slug", "book-two-slug"], "unpublished": []},
    )

    merged = events.merge_changes(older, newer, None)

    assert [r["slug"] for r in merged["published"]] == ["a"]
    # Published, then updated before the receiver saw it: still published.
    assert [r["slug"] for r in merged["books"]["published"]] == ["book-one-slug"]
    assert [r["slug"] for r in merged["books"]["updated"]] == ["book-two-slug"]
    jsonschema.validate(_body(merged), EVENT_SCHEMA)


@pytest.fixture
def told(blog: Blog, clock: FakeClock) -> Blog:
    """The blog, sending its webhooks over loopback on the test's clock."""
    transport = Transport(AddressPolicy(allow_loopback=True), connect_timeout_s=0.5, total_timeout_s=1.0)
    blog.hook_parts = HookParts(transport, timing=HookTiming(now=clock.now, sleep=clock.sleep))
    return blog


def test_a_push_that_changes_only_a_chapter_tells_the_front_end_which_book(
    told: Blog, receiver: WebhookReceiver
) -> None:
    book: dict[str, bytes | None] = {
        "books/lambda-field-notes/config.yaml": b"title: Notes\npublished: true\n",
        "books/lambda-field-notes/1.intro.md": b"---\ntitle: Intro\n---\nv1\n",
    }
    told.commit(book)
    told.deliver_via_lambda(delivery="push-1")
    secret = new_secret()
    with told.store() as store:
        user = store.users.get_user(USER)
        assert user is not None
        HookStore(store.db).add_endpoint(
            user.id, receiver.url("/hook"), ("articles.changed",), secret, utc_now()
        )
    told.commit({"books/lambda-field-notes/1.intro.md": b"---\ntitle: Intro\n---\nv2\n"})

    told.deliver_via_lambda(delivery="push-2")

    [request] = receiver.received
    data = verify(request, secret)["data"]
    assert data["published"] == data["updated"] == data["unpublished"] == []
    assert [ref["apiPath"] for ref in data["books"]["updated"]] == ["/users/alice/books/lambda-field-notes"]
