"""The JSON Schema (draft 2020-12) of every body blog-api's outgoing webhooks send.

The front-end guide prints the same document (a test keeps the two equal), so a receiver can validate
what it gets, or generate its types from it.
"""

from __future__ import annotations

from typing import Any

_NULLABLE_STRING = {"type": ["string", "null"]}

_ARTICLE_REF = {
    "type": "object",
    "required": ["slug", "url", "apiPath"],
    "additionalProperties": False,
    "properties": {
        "slug": {"type": "string", "minLength": 1},
        "url": {
            "type": ["string", "null"],
            "description": "SITE_URL + /articles/<slug>; null without SITE_URL",
        },
        "apiPath": {"type": "string", "description": "/users/<user>/articles/<slug> on the API"},
        "ogpUrl": {
            "type": "string",
            "description": "the article's share image, as the read API's ogpUrl (\"\" for none); absent "
            "from events queued by a version that did not send it",
        },
    },
}

_ARTICLE_LIST = {"type": "array", "items": {"$ref": "#/$defs/articleRef"}}

_BOOK_REF = {
    "type": "object",
    "required": ["slug", "url", "apiPath"],
    "additionalProperties": False,
    "properties": {
        "slug": {"type": "string", "minLength": 1},
        "url": {"type": ["string", "null"], "description": "SITE_URL + /books/<slug>; null without SITE_URL"},
        "apiPath": {"type": "string", "description": "/users/<user>/books/<slug> on the API"},
    },
}

_BOOK_LIST = {"type": "array", "items": {"$ref": "#/$defs/bookRef"}}


def _event(type_name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", "timestamp", "data"],
        "additionalProperties": False,
        "properties": {
            "type": {"const": type_name},
            "timestamp": {"type": "string", "format": "date-time"},
            "data": data,
        },
    }


EVENT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "blog-api outgoing webhook",
    "oneOf": [
        _event(
            "articles.changed",
            {
                "type": "object",
                "required": ["user", "published", "updated", "unpublished", "headSha", "truncated"],
                "additionalProperties": False,
                "properties": {
                    "user": {"type": "string"},
                    "published": _ARTICLE_LIST,
                    "updated": _ARTICLE_LIST,
                    "unpublished": _ARTICLE_LIST,
                    "headSha": _NULLABLE_STRING,
                    "books": {
                        "type": "object",
                        "description": "the Zenn books that changed; absent when none did",
                        "required": ["published", "updated", "unpublished"],
                        "additionalProperties": False,
                        "properties": {
                            "published": _BOOK_LIST,
                            "updated": _BOOK_LIST,
                            "unpublished": _BOOK_LIST,
                        },
                    },
                    "truncated": {
                        "type": "boolean",
                        "description": "true: more than 500 slugs changed and the lists are cut; "
                        "refresh everything",
                    },
                },
            },
        ),
        _event(
            "sync.failed",
            {
                "type": "object",
                "required": ["user", "delivery", "headSha", "reason", "failedPaths", "filesLeft", "failures"],
                "additionalProperties": False,
                "properties": {
                    "user": {"type": "string"},
                    "delivery": _NULLABLE_STRING,
                    "headSha": _NULLABLE_STRING,
                    "reason": {"type": "string"},
                    "failedPaths": {"type": "array", "items": {"type": "string"}},
                    "filesLeft": {"type": "integer", "minimum": 0},
                    "failures": {"type": "integer", "minimum": 1},
                },
            },
        ),
        _event(
            "ping",
            {
                "type": "object",
                "required": ["user", "endpoint", "message"],
                "additionalProperties": False,
                "properties": {
                    "user": {"type": "string"},
                    "endpoint": {"type": "string"},
                    "message": {"type": "string"},
                },
            },
        ),
    ],
    "$defs": {"articleRef": _ARTICLE_REF, "bookRef": _BOOK_REF},
}
