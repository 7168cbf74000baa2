"""Installation events: ``users.github_installation_id`` follows the GitHub App installation."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from flask import Flask

from function.app import create_app
from function.aws.dispatch import dispatch
from function.observability.logs import JsonFormatter
from function.services import Services
from function.settings import Settings
from tests.kit.blog_fixtures import USER, Blog
from tests.kit.deliveries import delivery_uuid, github_headers, push_payload
from tests.kit.github_fixtures import INSTALLATION_ID, REPO
from tests.kit.github_standin import account_id_of


def installation_payload(action: str, installation_id: int, login: str) -> dict[str, Any]:
    """The shape GitHub sends for ``installation`` (fields we read, plus the usual neighbours)."""
    return {
        "action": action,
        "installation": {
            "id": installation_id,
            "account": {"login": login, "id": account_id_of(login), "type": "User"},
            "repository_selection": "selected",
            "app_id": 12345,
            "target_type": "User",
            "permissions": {"contents": "read", "metadata": "read"},
            "events": ["push"],
        },
        "repositories": [{"id": 1296269, "name": "blog", "full_name": f"{login}/blog", "private": True}],
        "sender": {"login": login, "type": "User"},
    }


def repositories_payload(action: str, installation_id: int, login: str) -> dict[str, Any]:
    data = installation_payload(action, installation_id, login)
    repos = data.pop("repositories")
    data["repositories_added"] = repos if action == "added" else []
    data["repositories_removed"] = repos if action == "removed" else []
    return data


def send(app: Flask, event: str, payload: dict[str, Any], delivery: str = "i-1") -> Any:
    body = json.dumps(payload).encode()
    return app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, event=event, delivery=delivery)
    )


def installation_of(blog: Blog, name: str) -> int | None:
    with blog.store() as store:
        user = store.users.get_user(name)
    assert user is not None
    return user.installation_id


def add_user(blog: Blog, name: str, installation_id: int | None = None) -> None:
    with blog.store() as store:
        store.users.add_user(name, f"{name}@example.com", installation_id)


def app_with_map(blog: Blog, mapping: dict[str, str]) -> Flask:
    settings = Settings(**{**blog.settings.__dict__, "installation_user_map": mapping})
    return create_app(services=Services(settings, source=blog.source, database=blog.db))


def test_created_links_the_user_whose_name_is_the_account_login(blog: Blog) -> None:
    blog.github.install(4242, "bob")
    add_user(blog, "bob")

    answer = send(blog.app, "installation", installation_payload("created", 4242, "bob"))

    assert answer.status_code == 200
    assert answer.get_json() == {
        "status": "processed",
        "installation": 4242,
        "user": "bob",
        "change": "linked",
    }
    assert installation_of(blog, "bob") == 4242


def test_created_follows_the_login_map_from_settings(blog: Blog) -> None:
    blog.github.install(4242, "Bob-GitHub")
    add_user(blog, "bob")
    app = app_with_map(blog, {"Bob-GitHub": "bob"})

    answer = send(app, "installation", installation_payload("created", 4242, "Bob-GitHub"))

    assert answer.get_json()["user"] == "bob"
    assert installation_of(blog, "bob") == 4242


def test_created_moves_the_installation_from_a_user_who_held_it(blog: Blog) -> None:
    blog.github.install(INSTALLATION_ID, "bob")
    # GIVEN alice holds installation 1 (a copied database), but GitHub says it is bob's
    add_user(blog, "bob")

    send(blog.app, "installation", installation_payload("created", INSTALLATION_ID, "bob"))

    assert installation_of(blog, "bob") == INSTALLATION_ID
    assert installation_of(blog, USER) is None


def test_deleted_clears_the_installation_id(blog: Blog) -> None:
    blog.github.uninstall(INSTALLATION_ID)  # GitHub confirms: it is gone
    answer = send(blog.app, "installation", installation_payload("deleted", INSTALLATION_ID, USER))

    assert answer.get_json()["change"] == "cleared"
    assert installation_of(blog, USER) is None


def test_deleted_for_an_installation_nobody_holds_is_skipped(blog: Blog) -> None:
    answer = send(blog.app, "installation", installation_payload("deleted", 999, "carol"))

    assert answer.status_code == 200
    assert answer.get_json()["status"] == "skipped"
    assert installation_of(blog, USER) == INSTALLATION_ID


@pytest.mark.parametrize("action", ["added", "removed"])
def test_installation_repositories_links_the_user_to_the_installation(blog: Blog, action: str) -> None:
    blog.github.install(4242, "bob")
    add_user(blog, "bob", installation_id=17)

    answer = send(blog.app, "installation_repositories", repositories_payload(action, 4242, "bob"))

    assert answer.get_json()["change"] == "linked"
    assert installation_of(blog, "bob") == 4242


def test_an_event_that_changes_nothing_says_unchanged(blog: Blog) -> None:
    blog.github.install(INSTALLATION_ID, USER)
    answer = send(blog.app, "installation_repositories", repositories_payload("added", INSTALLATION_ID, USER))

    assert answer.get_json()["change"] == "unchanged"


def test_unknown_account_is_skipped_and_logs_the_fix(blog: Blog, caplog: pytest.LogCaptureFixture) -> None:
    blog.github.install(4242, "stranger")
    with caplog.at_level(logging.WARNING):
        answer = send(blog.app, "installation", installation_payload("created", 4242, "stranger"))

    assert answer.status_code == 200
    assert answer.get_json()["status"] == "skipped"
    [record] = [r for r in caplog.records if r.getMessage() == "Installation for unknown user"]
    assert record.fix.startswith("blog-api users set-installation --name <user> --installation-id 4242")  # type: ignore[attr-defined]


def test_suspend_changes_no_user(blog: Blog) -> None:
    answer = send(blog.app, "installation", installation_payload("suspend", INSTALLATION_ID, USER))

    assert answer.get_json()["status"] == "skipped"
    assert installation_of(blog, USER) == INSTALLATION_ID


def test_an_installation_event_without_an_installation_id_is_a_bad_request(blog: Blog) -> None:
    answer = send(
        blog.app, "installation", {"action": "created", "installation": {"account": {"login": "x"}}}
    )

    assert answer.status_code == 400
    assert answer.get_json()["error"] == "BAD_REQUEST"


def test_in_lambda_mode_the_accept_path_forwards_without_touching_the_database(
    lambda_app: Flask, invoker: Any
) -> None:
    # lambda_app's database has no tables: any query would fail the request
    answer = send(lambda_app, "installation", installation_payload("created", 4242, "bob"), delivery="i-9")

    assert answer.status_code == 202
    [queued] = [json.loads(p) for p in invoker.payloads]
    assert (queued["kind"], queued["event"], queued["delivery"]) == (
        "github-webhook",
        "installation",
        delivery_uuid("i-9"),
    )


def test_in_lambda_mode_the_forwarded_event_is_applied_through_the_pass_through(blog: Blog) -> None:
    blog.github.install(4242, "bob")
    add_user(blog, "bob")
    app = blog.lambda_app()
    assert send(app, "installation", installation_payload("created", 4242, "bob")).status_code == 202

    result = dispatch(app, json.loads(blog.invoker.payloads[-1]), None)

    assert result["statusCode"] == 200
    assert result["body"]["change"] == "linked"
    assert installation_of(blog, "bob") == 4242


def test_a_forged_installation_envelope_is_refused(blog: Blog) -> None:
    add_user(blog, "bob")
    app = blog.lambda_app()
    send(app, "installation", installation_payload("created", 4242, "bob"))
    envelope = json.loads(blog.invoker.payloads[-1])
    envelope["signature"] = "sha256=" + "0" * 64

    result = dispatch(app, envelope, None)

    assert result["statusCode"] == 401
    assert installation_of(blog, "bob") is None


def test_an_unknown_installation_on_a_push_logs_the_exact_fix(
    blog: Blog, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps(push_payload(installation_id=999, repo=REPO)).encode()

    with caplog.at_level(logging.ERROR):
        answer = blog.client.post("/webhooks/github", data=body, headers=github_headers(body, delivery="p-1"))

    assert answer.status_code == 422
    [record] = [r for r in caplog.records if r.getMessage() == "Unknown installation"]
    line = json.loads(JsonFormatter().format(record))
    assert line["fix"] == "blog-api users set-installation --name <user> --installation-id 999"
    assert line["delivery"] == delivery_uuid("p-1")
    # and `blog-api deliveries` shows the failure with the same fix
    with blog.store() as store:
        [recorded] = [
            d for d in store.deliveries.recent_deliveries(10) if d.delivery_id == delivery_uuid("p-1")
        ]
    assert recorded.outcome == "failed" and recorded.installation_id == 999
    assert recorded.error is not None and line["fix"] in recorded.error


@pytest.mark.parametrize("installation_id", [0, -1, 2**63, True, "7"])
def test_an_installation_id_out_of_range_is_a_bad_request(blog: Blog, installation_id: Any) -> None:
    payload = installation_payload("created", 1, USER)
    payload["installation"]["id"] = installation_id

    answer = send(blog.app, "installation", payload)

    assert answer.status_code == 400


def test_a_replayed_deleted_event_after_created_does_not_unlink_a_live_installation(blog: Blog) -> None:
    # GIVEN bob installed the App (4242), then uninstalled and installed it again: GitHub has 4242
    add_user(blog, "bob")
    blog.github.install(4242, "bob")
    assert (
        send(blog.app, "installation", installation_payload("created", 4242, "bob"), "i-1").status_code == 200
    )

    # WHEN the old `deleted` delivery is replayed (a redelivery, or late)
    answer = send(blog.app, "installation", installation_payload("deleted", 4242, "bob"), "i-0")

    # THEN GitHub's word wins: the link stays, and the answer says why
    assert answer.status_code == 200
    assert answer.get_json()["status"] == "skipped"
    assert "still exists on GitHub" in answer.get_json()["reason"]
    assert installation_of(blog, "bob") == 4242
    asked = [r for r in blog.github.requests if r.kind == "installation"]
    assert [r.path for r in asked] == ["/app/installations/4242"] * 2
    assert all(r.headers["authorization"].startswith("Bearer ey") for r in asked)  # the App's JWT


def test_a_late_created_event_for_an_uninstalled_installation_links_nobody(blog: Blog) -> None:
    add_user(blog, "bob")  # 4242 is not (any more) installed on GitHub

    answer = send(blog.app, "installation", installation_payload("created", 4242, "bob"))

    assert answer.get_json()["status"] == "skipped"
    assert "does not exist on GitHub" in answer.get_json()["reason"]
    assert installation_of(blog, "bob") is None


def test_the_account_is_the_one_github_names_not_the_payloads(blog: Blog) -> None:
    add_user(blog, "bob")
    add_user(blog, "mallory")
    blog.github.install(4242, "bob")

    answer = send(blog.app, "installation", installation_payload("created", 4242, "mallory"))

    assert answer.get_json()["user"] == "bob"
    assert (installation_of(blog, "bob"), installation_of(blog, "mallory")) == (4242, None)


def test_github_unavailable_answers_503_and_changes_nothing(blog: Blog) -> None:
    blog.github.fail("/app/installations/1", 502, times=20)

    answer = send(blog.app, "installation", installation_payload("deleted", INSTALLATION_ID, USER))

    assert answer.status_code == 503
    assert installation_of(blog, USER) == INSTALLATION_ID
