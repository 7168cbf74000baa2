"""Read routes for the blog's front end: published articles only."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from function.api.serialise import article_json
from function.errors import BadRequest, NotFound
from function.web import services

blueprint = Blueprint("articles", __name__)

_MAX_PARAM = 200


def _param(name: str) -> str | None:
    value = request.args.get(name)
    if value is None or value == "":
        return None
    if len(value) > _MAX_PARAM:
        raise BadRequest(f"'{name}' is longer than {_MAX_PARAM} characters")
    return value


@blueprint.get("/users/<name>/articles")
def list_articles(name: str) -> tuple[dict[str, Any], int]:
    kind, tag = _param("type"), _param("tag")
    if tag is not None:
        tag = tag.strip("/")
    with services().store() as store:
        found = store.published_articles(name, type=kind, tag=tag)
    if found is None:
        raise NotFound(f"no user named {name!r}")
    return {"articles": [article_json(article) for article in found]}, 200


@blueprint.get("/users/<name>/articles/<slug>")
def get_article(name: str, slug: str) -> tuple[dict[str, Any], int]:
    with services().store() as store:
        article = store.published_article(name, slug)
    if article is None:
        raise NotFound(f"no published article {slug!r} for {name!r}")
    return article_json(article), 200
