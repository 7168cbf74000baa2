"""The safety valve through the App path (SQLite and MariaDB): a push that would archive most of a blog is
held (nothing archived, recorded ``held`` with the count, the alarm told), a redelivery with the removal
confirmed carries it out, newest still wins, and a confirmed sync that fails keeps its confirmation."""

from __future__ import annotations

from typing import Any

import pytest

from function.hooks.guard import AddressPolicy
from function.hooks.transport import Transport
from function.hooks.wiring import HookParts
from tests.kit.blog_checks import TREES, delivery
from tests.kit.blog_fixtures import Blog, article

BLOG = {f"articles/post-{n:02d}.md": article(f"Post {n}") for n in range(30)}
SAMPLE = {"articles/sample.md": article("The sample")}


class RecordingAlarm:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def notify(self, subject: str, message: str) -> None:
        self.sent.append((subject, message))


@pytest.fixture
def alarm(blog: Blog) -> RecordingAlarm:
    recording = RecordingAlarm()
    blog.hook_parts = HookParts(Transport(AddressPolicy(allow_loopback=True)), alarm=recording)
    return recording


def served_slugs(blog: Blog) -> set[str]:
    return {a["slug"] for a in blog.articles()}


def wrong_push(blog: Blog) -> Any:
    """The blog's 30 articles synced, then a push whose tree holds only the sample: answered."""
    blog.github.set_files(BLOG)
    assert blog.push(delivery="first").get_json()["succeeded"] == 30
    blog.commit({**dict.fromkeys(BLOG), **SAMPLE})
    return blog.push(delivery="wrong")


def confirm(blog: Blog) -> None:
    """What ``blog-api redeliver --confirm-removal`` records before GitHub redelivers."""
    with blog.store() as store:
        user = store.users.get_user("alice")
        assert user is not None
        store.users.confirm_removal(user.id, store.reads.served_count("alice"))


def confirmation(blog: Blog) -> int | None:
    with blog.store() as store:
        user = store.users.get_user("alice")
    assert user is not None
    return user.removal_confirmed


def test_a_push_that_would_archive_the_whole_blog_is_held(blog: Blog, alarm: RecordingAlarm) -> None:
    answer = wrong_push(blog)

    # THEN nothing is written: the 30 are served, the sample is not
    assert answer.status_code == 200
    body = answer.get_json()
    assert {k: body[k] for k in ("status", "held", "served")} == {"status": "held", "held": 30, "served": 30}
    assert served_slugs(blog) == {f"post-{n:02d}" for n in range(30)}
    # AND the delivery is recorded held, with the count and the ways out
    record = delivery(blog, "wrong")
    assert (record.outcome, record.archived, record.written) == ("held", 0, 0)
    assert record.error is not None and record.error.startswith(
        "held: this sync would archive 30 of the 30 articles 'alice' serves"
    )
    # AND the alarm topic is told, with the same words
    assert alarm.sent == [("blog-api: a sync of alice was held", record.error)]


def test_a_redelivery_with_the_removal_confirmed_carries_it_out(blog: Blog, alarm: RecordingAlarm) -> None:
    wrong_push(blog)
    confirm(blog)

    # WHEN GitHub redelivers the held delivery (the same delivery id)
    answer = blog.push(delivery="wrong").get_json()

    # THEN it is carried out, and the confirmation is used up
    assert (answer["status"], answer["archived"], answer["written"]) == ("processed", 30, 1)
    assert served_slugs(blog) == {"sample"}
    assert delivery(blog, "wrong").outcome == "success"
    assert confirmation(blog) is None
    # AND a later mass removal is held again
    blog.commit({**dict.fromkeys(SAMPLE), **BLOG})
    blog.push(delivery="back")
    blog.commit({**dict.fromkeys(BLOG), **SAMPLE})
    assert blog.push(delivery="again").get_json()["status"] == "held"


def test_newest_wins_a_fixed_source_leaves_the_confirmed_redelivery_nothing_to_archive(
    blog: Blog, alarm: RecordingAlarm
) -> None:
    wrong_push(blog)
    # WHEN the author fixes the branch before anyone confirms
    blog.commit({**BLOG, **dict.fromkeys(SAMPLE)})
    assert blog.push(delivery="fixed").get_json()["archived"] == 0
    confirm(blog)
    # AND the held delivery is redelivered all the same
    answer = blog.push(delivery="wrong").get_json()

    # THEN the branch as it is now was synced already: nothing is archived, the confirmation is used up
    assert answer == {"status": "skipped", "reason": "head already synced"}
    assert served_slugs(blog) == {f"post-{n:02d}" for n in range(30)}
    assert confirmation(blog) is None


def test_a_confirmed_sync_that_fails_keeps_its_confirmation_for_the_retry(
    blog: Blog, alarm: RecordingAlarm
) -> None:
    wrong_push(blog)
    confirm(blog)
    blog.github.fail(TREES, 502, times=None)

    failed = blog.push(delivery="wrong")

    assert failed.status_code >= 500
    assert confirmation(blog) == 30
    assert len(served_slugs(blog)) == 30
    blog.github.clear_faults()
    assert blog.push(delivery="wrong").get_json()["archived"] == 30
    assert confirmation(blog) is None


def test_a_small_blog_emptied_is_not_held(blog: Blog, alarm: RecordingAlarm) -> None:
    few = {f"articles/few-{n}.md": article(f"Few {n}") for n in range(19)}
    blog.github.set_files(few)
    blog.push(delivery="first")
    blog.commit(dict.fromkeys(few))

    answer = blog.push(delivery="empty").get_json()

    assert (answer["status"], answer["archived"]) == ("processed", 19)
    assert alarm.sent == []
