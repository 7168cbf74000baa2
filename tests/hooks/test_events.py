"""The bodies front ends receive: their schema, and how two pending events merge into one."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest

from function.hooks import events
from function.hooks.schema import EVENT_SCHEMA

AT = datetime(2026, 3, 1, 9, 30, 15, 123456)


def changed(published: list[str] = [], updated: list[str] = [], unpublished: list[str] = []) -> dict:  # noqa: B006
    return events.articles_changed(
        "alice", published=published, updated=updated, unpublished=unpublished, head_sha="abc", site_url=None
    )


def slugs(data: dict, kind: str) -> list[str]:
    return [ref["slug"] for ref in data[kind]]


def test_an_articles_changed_body_names_slugs_pages_and_api_paths() -> None:
    data = events.articles_changed(
        "alice",
        published=["hello world"],
        updated=["b"],
        unpublished=[],
        head_sha="abc123",
        site_url="https://blog.example.com/",
    )
    body = json.loads(events.body(events.ARTICLES_CHANGED, AT, data))

    assert body == {
        "type": "articles.changed",
        "timestamp": "2026-03-01T09:30:15.123Z",
        "data": {
            "user": "alice",
            "published": [
                {
                    "slug": "hello world",
                    "url": "https://blog.example.com/articles/hello%20world",
                    "apiPath": "/users/alice/articles/hello%20world",
                }
            ],
            "updated": [
                {
                    "slug": "b",
                    "url": "https://blog.example.com/articles/b",
                    "apiPath": "/users/alice/articles/b",
                }
            ],
            "unpublished": [],
            "headSha": "abc123",
            "truncated": False,
        },
    }
    jsonschema.validate(body, EVENT_SCHEMA)


@pytest.mark.parametrize(
    "data_and_type",
    [
        (
            events.SYNC_FAILED,
            events.sync_failed("alice", delivery="d-1", head_sha=None, reason="GitHub unavailable"),
        ),
        (events.PING, events.ping("alice", "ep_1")),
        (events.ARTICLES_CHANGED, changed(unpublished=["gone"])),
    ],
)
def test_every_body_matches_the_schema(data_and_type: tuple[str, dict]) -> None:
    event_type, data = data_and_type
    jsonschema.validate(json.loads(events.body(event_type, AT, data)), EVENT_SCHEMA)


def test_the_schema_refuses_a_body_of_another_shape() -> None:
    body = json.loads(events.body(events.PING, AT, events.ping("alice", "ep_1")))
    body["data"]["extra"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(body, EVENT_SCHEMA)


def test_merged_changes_name_each_slug_once_by_its_latest_change() -> None:
    older = changed(published=["new", "flip"], updated=["edited"], unpublished=["back"])
    newer = changed(updated=["new", "edited", "other"], unpublished=["flip"], published=["back"])

    merged = events.merge_changes(older, newer, site_url=None)

    assert sorted(slugs(merged, "published")) == ["back", "new"]  # "new": published, then edited
    assert sorted(slugs(merged, "updated")) == ["edited", "other"]
    assert slugs(merged, "unpublished") == ["flip"]
    assert merged["headSha"] == "abc"


def test_more_than_500_slugs_are_cut_and_flagged() -> None:
    data = changed(published=[f"a{i}" for i in range(400)], updated=[f"b{i}" for i in range(200)])

    assert len(data["published"]) == 400 and len(data["updated"]) == 100
    assert data["truncated"] is True
    again = events.merge_changes(data, changed(updated=["late"]), site_url=None)
    assert again["truncated"] is True


def test_merged_failures_keep_the_newest_and_count_them() -> None:
    first = events.sync_failed("alice", delivery="d-1", head_sha="a", reason="GitHub unavailable")
    second = events.sync_failed("alice", delivery="d-2", head_sha="b", reason="time budget reached", left=3)

    merged = events.merge_failures(first, second, site_url=None)

    assert (merged["delivery"], merged["reason"], merged["filesLeft"], merged["failures"]) == (
        "d-2",
        "time budget reached",
        3,
        2,
    )


def test_the_front_end_guide_prints_this_schema_and_a_body_it_accepts() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "front-ends.md").read_text()
    printed = page.split("<!-- schema: begin -->\n```json\n", 1)[1].split("\n```\n<!-- schema: end -->", 1)[0]
    assert json.loads(printed) == EVENT_SCHEMA
    example = page.split("## The body and its schema\n\n```json\n", 1)[1].split("\n```", 1)[0]
    jsonschema.validate(json.loads(example), EVENT_SCHEMA)


def test_each_entry_carries_its_share_image_when_known() -> None:
    data = events.articles_changed(
        "alice",
        published=["a"],
        updated=["b"],
        unpublished=["gone"],
        head_sha="abc",
        site_url=None,
        ogp_urls={"a": "https://img.example/a.png", "b": "", "gone": "https://og.example/gone"},
    )
    assert [ref["ogpUrl"] for kind in ("published", "updated", "unpublished") for ref in data[kind]] == [
        "https://img.example/a.png",
        "",
        "https://og.example/gone",
    ]
    jsonschema.validate(json.loads(events.body(events.ARTICLES_CHANGED, AT, data)), EVENT_SCHEMA)


def test_a_merge_keeps_each_slugs_newest_share_image_and_an_old_event_stays_valid() -> None:
    older = changed(published=["a", "b"])  # queued by a version that sent no share image
    newer = events.articles_changed(
        "alice",
        published=[],
        updated=["b", "c"],
        unpublished=[],
        head_sha="def",
        site_url=None,
        ogp_urls={"b": "https://og.example/b2", "c": ""},
    )

    merged = events.merge_changes(older, newer, site_url=None)

    refs = {ref["slug"]: ref for kind in ("published", "updated") for ref in merged[kind]}
    assert "ogpUrl" not in refs["a"]
    assert (refs["b"]["ogpUrl"], refs["c"]["ogpUrl"]) == ("https://og.example/b2", "")
    jsonschema.validate(json.loads(events.body(events.ARTICLES_CHANGED, AT, merged)), EVENT_SCHEMA)
