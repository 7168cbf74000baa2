"""``{"kind": "init-db"}``: creating the tables through the function, for a database only it can reach.

Run as ``aws lambda invoke --function-name <prefix>-blog-api --payload '{"kind": "init-db"}' out.json``
(docs/first-delivery.md); like the schedule's event it has no signature, so only the handler's
pass-through may run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from function import handler as handler_module
from function.aws.dispatch import dispatch
from function.store.backends import open_database
from function.store.connection import connection
from function.store.migrations.steps import SCHEMA_VERSION
from tests.kit.blog_fixtures import Blog
from tests.kit.deliveries import SECRET, as_http_event

INIT_DB = {"kind": "init-db"}


def test_a_direct_invocation_creates_the_tables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # GIVEN the function's environment on Lambda and a database without tables
    url = f"sqlite:///{tmp_path}/fn.db"
    env = {
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "AWS_LAMBDA_FUNCTION_NAME": "d-st-blog-api",
        "DATABASE_URL": url,
        "ARTICLE_SOURCE": f"dir:{tmp_path}",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("GITHUB_WEBHOOK_SECRET_PARAM", "DATABASE_URL_PARAM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(handler_module, "_app", None)

    # WHEN the function is invoked with the event, twice (it is idempotent)
    first = handler_module.handler(dict(INIT_DB), None)
    second = handler_module.handler(dict(INIT_DB), None)

    # THEN it answers ready, having made the tables the first time and nothing the second
    ready = {"status": "ready", "message": "database ready", "schemaVersion": SCHEMA_VERSION}
    assert first == {
        "statusCode": 200,
        "body": {**ready, "migration": [f"created the tables at schema version {SCHEMA_VERSION}"]},
    }
    assert second == {
        "statusCode": 200,
        "body": {**ready, "migration": [f"schema version {SCHEMA_VERSION}: up to date"]},
    }
    db = open_database(url)
    with connection(db):
        assert {"users", "articles", "deliveries"} <= set(db.get_tables())
    db.close()


def test_over_http_in_inline_mode_it_is_forbidden(blog: Blog) -> None:
    answer = blog.client.post("/events", json=INIT_DB)

    assert answer.status_code == 403
    assert answer.get_json()["error"] == "FORBIDDEN"


def test_over_api_gateway_in_lambda_mode_it_is_forbidden(blog: Blog) -> None:
    event = as_http_event("apiGatewayProxyV2Event", "POST", "/events", json.dumps(INIT_DB).encode(), {})

    answer = dispatch(blog.lambda_app(), event, None)

    assert answer["statusCode"] == 403


def test_tables_of_another_version_are_refused_without_retries(blog: Blog) -> None:
    # GIVEN a deliveries table without a column this version needs
    with connection(blog.db) as db:
        db.execute_sql("ALTER TABLE deliveries DROP COLUMN attempts")

    answer = dispatch(blog.lambda_app(), dict(INIT_DB), None)

    # THEN a 4xx (returned, not raised: Lambda does not retry it) names the column
    assert answer["statusCode"] == 409
    assert answer["body"]["error"] == "SCHEMA_MISMATCH"
    assert "deliveries.attempts is missing" in answer["body"]["message"]


def add_user_event(**fields: object) -> dict[str, object]:
    return {"kind": "add-user", "name": "alice", "email": "alice@example.com", **fields}


def test_add_user_through_the_function_registers_the_user(blog: Blog) -> None:
    answer = dispatch(blog.lambda_app(), add_user_event(name="carol", installationId=4242), None)

    assert answer == {
        "statusCode": 200,
        "body": {
            "status": "added",
            "user": "carol",
            "email": "alice@example.com",
            "installation": 4242,
            "repository": None,
        },
    }
    with blog.store() as store:
        user = store.get_user("carol")
    assert user is not None and user.installation_id == 4242


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"name": "al/ice"}, '"name" must be'),
        ({"email": "nope"}, '"email" must be an e-mail address'),
        ({"installationId": "12"}, '"installationId" must be a number'),
        ({"installationId": 0}, '"installationId" must be a positive number'),
        ({"name": None}, 'add-user needs "name" and "email"'),
    ],
)
def test_add_user_with_a_bad_field_is_a_400_naming_it(
    blog: Blog, fields: dict[str, object], says: str
) -> None:
    answer = dispatch(blog.lambda_app(), {**add_user_event(name="dave"), **fields}, None)

    assert answer["statusCode"] == 400
    assert answer["body"]["message"].startswith(says)


def test_add_user_that_exists_is_a_409_naming_it(blog: Blog) -> None:
    # The blog fixture registers alice on installation 1.
    taken_name = dispatch(blog.lambda_app(), add_user_event(), None)
    taken_installation = dispatch(blog.lambda_app(), add_user_event(name="erin", installationId=1), None)

    assert taken_name["statusCode"] == taken_installation["statusCode"] == 409
    assert taken_name["body"]["message"].startswith("user 'alice' already exists")
    assert taken_installation["body"]["message"].startswith(
        "installation 1 is already registered to user 'alice'"
    )


def test_add_user_over_http_is_forbidden(blog: Blog) -> None:
    answer = blog.client.post("/events", json=add_user_event(name="mallory"))

    assert answer.status_code == 403
    with blog.store() as store:
        assert store.get_user("mallory") is None
