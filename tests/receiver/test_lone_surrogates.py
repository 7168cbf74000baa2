"""A signed push whose names hold a lone surrogate (JSON's ``"\\udcbf"`` escape decodes to one): no
repository, branch or commit is named so, and nothing can store or log the text as UTF-8. It is a bad
request (400) on both sides, never a 500."""

from __future__ import annotations

import json

import pytest

from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import github_headers

WEBHOOK = "/webhooks/github"


def _signed_push(blog: Blog, field: str) -> bytes:
    blog.commit({"articles/a.md": article("A")})
    payload = json.loads(blog.push_body())
    if field == "repository.full_name":
        payload["repository"]["full_name"] = "octo/blog\udcbf"
    elif field == "repository.default_branch":
        payload["repository"]["default_branch"] = "main\ud800"
        payload["ref"] = "refs/heads/main\ud800"
    else:
        payload["ref"] = "refs/heads/\udcbf"
        payload["repository"]["default_branch"] = "\udcbf"
    return json.dumps(payload).encode()  # ensure_ascii: the surrogate travels as an escape


@pytest.mark.parametrize("field", ["repository.full_name", "repository.default_branch", "ref"])
def test_a_lone_surrogate_in_a_signed_push_is_a_400_inline_and_on_lambda(blog: Blog, field: str) -> None:
    body = _signed_push(blog, field)
    headers = github_headers(body, delivery=f"surrogate-{field}")

    inline = blog.client.post(WEBHOOK, data=body, headers=headers)
    assert inline.status_code == 400, inline.get_data()
    assert inline.get_json()["error"] == "BAD_REQUEST"

    accepted = blog.lambda_app().test_client().post(WEBHOOK, data=body, headers=headers)
    assert accepted.status_code == 400, accepted.get_data()
    assert blog.invoker.payloads == []
