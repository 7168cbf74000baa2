"""``articles.changed`` naming the Zenn books a sync changed, valid against the published schema."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import jsonschema

from function.hooks import events
from function.hooks.schema import EVENT_SCHEMA


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
