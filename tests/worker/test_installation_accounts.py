"""Installations link users by GitHub's numeric account id, never by a login alone, and the user map is
exclusive. An installation granting exactly one repository names a user's repository."""

from __future__ import annotations

from typing import Any

from tests.kit.blog_fixtures import Blog
from tests.kit.github_standin import account_id_of
from tests.worker.test_installations import (
    add_user,
    app_with_map,
    installation_of,
    installation_payload,
    send,
)


def _linked_account(blog: Blog, name: str) -> int | None:
    with blog.store() as store:
        return store.users.account_of(name)


def _repository(blog: Blog, name: str) -> tuple[str | None, int | None]:
    with blog.store() as store:
        user = store.users.get_user(name)
    assert user is not None
    return user.repository, user.repository_id


def test_the_first_link_records_the_account_id_and_another_account_of_that_login_is_refused(
    blog: Blog,
) -> None:
    # GIVEN carol linked through her account (id A)
    blog.github.install(5001, "carol")
    add_user(blog, "carol")
    assert send(blog.app, "installation", installation_payload("created", 5001, "carol")).status_code == 200
    assert _linked_account(blog, "carol") == account_id_of("carol")
    # WHEN carol renames her account and someone else takes the login "carol" (another id) and installs
    blog.github.install(5002, "carol", account_id=777_000_001)
    answer = send(blog.app, "installation", installation_payload("created", 5002, "carol"), delivery="i-2")
    # THEN the stranger's installation links nobody: carol keeps hers
    assert answer.get_json()["status"] == "skipped"
    assert "another GitHub account" in answer.get_json()["reason"]
    assert installation_of(blog, "carol") == 5001


def test_a_renamed_account_still_links_its_user_by_id(blog: Blog) -> None:
    blog.github.install(5003, "dave")
    add_user(blog, "dave")
    send(blog.app, "installation", installation_payload("created", 5003, "dave"))
    # WHEN dave's account, renamed to "david", installs again (same account id)
    blog.github.install(5004, "david", account_id=account_id_of("dave"))
    answer = send(blog.app, "installation", installation_payload("created", 5004, "david"), delivery="i-2")
    # THEN it is still dave's blog
    assert answer.get_json()["user"] == "dave"
    assert installation_of(blog, "dave") == 5004


def test_a_mapped_user_is_never_linked_by_an_account_of_its_name(blog: Blog) -> None:
    # GIVEN a map that gives user erin to the account "erin-corp"
    add_user(blog, "erin")
    app = app_with_map(blog, {"erin-corp": "erin"})
    # WHEN an account called "erin" (not the mapped one) installs the App
    blog.github.install(5005, "erin")
    answer = send(app, "installation", installation_payload("created", 5005, "erin"))
    # THEN it links nobody; the mapped account does
    assert answer.get_json()["status"] == "skipped"
    assert installation_of(blog, "erin") is None
    blog.github.install(5006, "erin-corp")
    assert (
        send(app, "installation", installation_payload("created", 5006, "erin-corp"), "i-2").get_json()[
            "user"
        ]
        == "erin"
    )


def test_the_map_may_name_an_account_by_its_id(blog: Blog) -> None:
    add_user(blog, "frank")
    app = app_with_map(blog, {str(account_id_of("fr4nk-gh")): "frank"})
    blog.github.install(5007, "fr4nk-gh")
    answer = send(app, "installation", installation_payload("created", 5007, "fr4nk-gh"))
    assert answer.get_json()["user"] == "frank"


def _one_repository(installation_id: int, login: str, full_name: str, repo_id: int) -> dict[str, Any]:
    payload = installation_payload("created", installation_id, login)
    payload["installation"]["repository_selection"] = "selected"
    payload["repositories"] = [{"id": repo_id, "name": full_name.split("/")[1], "full_name": full_name}]
    return payload


def test_an_installation_granting_exactly_one_repository_names_it(blog: Blog) -> None:
    add_user(blog, "gina")
    blog.github.install(5008, "gina")
    send(blog.app, "installation", _one_repository(5008, "gina", "gina/notes", 4_000_001))
    assert _repository(blog, "gina") == ("gina/notes", 4_000_001)


def test_an_installation_on_all_repositories_names_none(blog: Blog) -> None:
    add_user(blog, "hana")
    blog.github.install(5009, "hana")
    payload = _one_repository(5009, "hana", "hana/notes", 4_000_002)
    payload["installation"]["repository_selection"] = "all"
    send(blog.app, "installation", payload)
    assert _repository(blog, "hana") == (None, None)
