"""The safety valve from the command line: ``blog-api sync`` exits 4 on a held sync, and carries it out with
``--confirm-removal``; ``blog-api redeliver --confirm-removal`` confirms and redelivers the held ones."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.records import Outcome
from tests.kit.blog_fixtures import article
from tests.kit.builders import article as parsed
from tests.kit.cli import run_cli
from tests.kit.hook_deliveries import HookDeliveries


def folder(root: Path, count: int) -> Path:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "articles").mkdir(exist_ok=True)
    for n in range(count):
        (root / "articles" / f"post-{n:02d}.md").write_bytes(article(f"Post {n}"))
    return root


def test_a_sync_that_would_archive_the_blog_is_held_then_carried_out_when_confirmed(tmp_path: Path) -> None:
    root = folder(tmp_path / "my-zenn", 25)
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{root}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    assert run_cli("sync", "--user", "demo", env=env).exit_code == 0
    shutil.rmtree(root / "articles")
    (root / "articles").mkdir()

    held = run_cli("sync", "--user", "demo", env=env)

    assert held.exit_code == 4
    assert held.stdout.splitlines()[-1] == (
        "held demo: held: this sync would archive 25 of the 25 articles 'demo' serves (their files are "
        "gone from the source); nothing was archived. If the source is right, `blog-api sync --user demo "
        "--confirm-removal` (or `blog-api redeliver --confirm-removal`) carries it out; if it is not, fix "
        "it and push again"
    )
    deliveries = run_cli("deliveries", env=env)
    assert "held" in deliveries.stdout

    confirmed = run_cli("sync", "--user", "demo", "--confirm-removal", env=env)

    assert confirmed.exit_code == 0, confirmed.stdout
    assert "archived=25" in confirmed.stdout


def test_redeliver_confirm_removal_confirms_the_users_and_redelivers_the_held_deliveries(
    hook_deliveries: HookDeliveries, app_env: dict[str, str | None]
) -> None:
    # GIVEN alice serving 3 articles, and a delivery of hers held half an hour ago (GitHub saw a 202)
    db = open_database(str(app_env["DATABASE_URL"]))
    held_at = datetime.now(UTC).replace(tzinfo=None) - timedelta(minutes=30)
    with connection(db):
        store = PeeweeStore(db)
        user = store.users.add_user("alice", "a@example.com", 1, "octo/blog")
        with store.locks.user_lock(user.id, 5):
            index = store.reconcile.load_index(user.id)
            store.reconcile.apply(user.id, [parsed(f"p{n}") for n in range(3)], [], held_at, index=index)
        store.deliveries.start_delivery("held-one", "push", 1, "octo/blog", held_at, held_at)
        store.deliveries.finish_delivery(
            "held-one", head_sha="h", processed=0, succeeded=0, failed=0, archived=0,
            outcome=Outcome.HELD, error="held: …", now=held_at,
        )  # fmt: skip
    hook_deliveries.add(guid="other", status_code=202, at=datetime.now(UTC) - timedelta(minutes=40))
    attempt = hook_deliveries.add(
        guid="held-one", status_code=202, at=datetime.now(UTC) - timedelta(minutes=30)
    )

    result = run_cli("redeliver", "--confirm-removal", "--since", "2h", env=app_env)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert hook_deliveries.redelivered == [attempt["id"]]
    assert "1 deliveries of alice; redelivered 1; removal confirmed" in result.stdout
    with connection(db):
        confirmed = PeeweeStore(db).users.get_user("alice")
    assert confirmed is not None and confirmed.removal_confirmed == 3
    db.close()


def test_redeliver_confirm_removal_with_nothing_held_says_so(app_env: dict[str, str | None]) -> None:
    result = run_cli("redeliver", "--confirm-removal", env=app_env)

    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("no delivery was held since ")
