"""A user is bound to the source of their first sync (SQLite and MariaDB): by the CLI as by a push; a sync
or a delivery from another source is refused, naming both and the command that rebinds, and archives
nothing; ``users set-source`` rebinds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from function.app import create_app
from function.errors import SourceMismatch
from function.services import Services
from function.settings import Settings
from function.sources.folder import DirectorySource
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.runner import migrate
from function.worker.sync import Worker
from tests.kit.blog_checks import delivery
from tests.kit.blog_fixtures import Blog, article
from tests.kit.cli import run_cli
from tests.kit.deliveries import SECRET, github_headers, push_payload

USER = "demo"


def folder_with(root: Path, count: int, prefix: str = "post") -> Path:
    """A Zenn-shaped repository (an images folder beside the articles) with ``count`` articles."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    for n in range(count):
        path = root / "articles" / f"{prefix}-{n:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(article(f"{prefix} {n}"))
    return root


@pytest.fixture
def db(db_url: str) -> PeeweeStore:
    database = open_database(db_url)
    with connection(database):
        migrate(database)
        PeeweeStore(database).users.add_user(USER, "demo@example.com", 1)
    return PeeweeStore(database)


def sync(db: PeeweeStore, folder: Path) -> object:
    with connection(db.db):
        return Worker(PeeweeStore(db.db), DirectorySource(folder)).sync_user(USER)


def user_of(db: PeeweeStore) -> object:
    with connection(db.db):
        return PeeweeStore(db.db).users.get_user(USER)


def served(db: PeeweeStore) -> set[str]:
    with connection(db.db):
        articles = PeeweeStore(db.db).reads.published_articles(USER) or []
    return {a.slug for a in articles}


def test_the_first_cli_sync_binds_the_user_to_the_folders_root(db: PeeweeStore, tmp_path: Path) -> None:
    root = folder_with(tmp_path / "my-zenn", 3)

    sync(db, root / "articles")  # named by its articles folder: the same source as its root

    assert user_of(db).source == f"dir:{root}"  # type: ignore[attr-defined]
    sync(db, root)  # the root itself is the same source: accepted


def test_a_sync_from_another_folder_is_refused_naming_both_and_archives_nothing(
    db: PeeweeStore, tmp_path: Path
) -> None:
    mine = folder_with(tmp_path / "my-zenn", 25)
    sample = folder_with(tmp_path / "sample", 8, prefix="sample")
    sync(db, mine)

    with pytest.raises(SourceMismatch) as refused:
        sync(db, sample)

    assert str(refused.value) == (
        f"user 'demo' is bound to the folder {mine}, and this sync reads the folder {sample}: refused, "
        f"nothing was synced or archived. To serve the folder {sample} as 'demo' instead: blog-api users "
        f"set-source --name demo --source dir:{sample} (what is not there is archived by the next sync, "
        "held for confirmation when it is most of the blog)"
    )
    assert served(db) == {f"post-{n:02d}" for n in range(25)}
    # The refused sync is recorded, so `blog-api deliveries` says why.
    with connection(db.db):
        [record] = [r for r in PeeweeStore(db.db).deliveries.recent_deliveries(5) if r.outcome == "failed"]
    assert record.event == "sync" and record.error is not None and "is bound to the folder" in record.error


def test_set_source_rebinds_and_the_next_sync_reconciles(
    db: PeeweeStore, db_url: str, tmp_path: Path
) -> None:
    mine = folder_with(tmp_path / "my-zenn", 3)
    other = folder_with(tmp_path / "other", 2, prefix="other")
    sync(db, mine)
    env = {"DATABASE_URL": db_url, "ARTICLE_SOURCE": None, "GITHUB_WEBHOOK_SECRET": None}

    result = run_cli("users", "set-source", "--name", USER, "--source", f"dir:{other / 'articles'}", env=env)

    assert result.exit_code == 0, result.stderr
    assert f"source=dir:{other}" in result.stdout
    sync(db, other)
    assert served(db) == {"other-00", "other-01"}


def test_set_source_refuses_what_is_no_source(db: PeeweeStore, db_url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": db_url, "ARTICLE_SOURCE": None, "GITHUB_WEBHOOK_SECRET": None}

    missing = run_cli("users", "set-source", "--name", USER, "--source", f"dir:{tmp_path / 'nope'}", env=env)
    wrong = run_cli("users", "set-source", "--name", USER, "--source", "owner/name", env=env)

    assert missing.exit_code == 1 and "does not exist" in missing.stderr
    assert wrong.stderr == (
        "error: --source must be dir:PATH (a folder) or github:OWNER/NAME (a repository)\n"
    )


def test_a_delivery_to_a_local_server_of_another_folder_is_refused_with_409(
    db: PeeweeStore, db_url: str, tmp_path: Path
) -> None:
    # GIVEN demo synced from their own folder, and a local server (make run) on the sample
    mine = folder_with(tmp_path / "my-zenn", 25)
    sample = shutil.copytree(
        Path(__file__).resolve().parents[2] / "examples" / "articles", tmp_path / "sample"
    )
    sync(db, mine)
    settings = Settings(webhook_secret=SECRET, database_url=db_url, article_source=f"dir:{sample}")
    app = create_app(services=Services(settings, database=db.db))
    body = __import__("json").dumps(push_payload(installation_id=1, repo="demo/blog")).encode()

    answer = app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="d-1")
    )

    # THEN the push is refused, in words naming both folders, and nothing is archived
    assert answer.status_code == 409
    assert answer.get_json()["error"] == "SOURCE_MISMATCH"
    assert f"is bound to the folder {mine}" in answer.get_json()["message"]
    assert served(db) == {f"post-{n:02d}" for n in range(25)}


def test_a_push_binds_github_and_a_folder_sync_for_that_user_is_refused(blog: Blog, tmp_path: Path) -> None:
    blog.github.set_files({"articles/a.md": article("A")})
    blog.push(delivery="first")
    with blog.store() as store:
        user = store.users.get_user("alice")
        assert user is not None and user.source == "github"

        with pytest.raises(
            SourceMismatch,
            match=r"is bound to GitHub \(the repository .*/.*\), and this sync reads the folder",
        ):
            Worker(store, DirectorySource(folder_with(tmp_path / "local", 1))).sync_user("alice")
    assert [a["slug"] for a in blog.articles()] == ["a"]


def test_a_push_for_a_user_bound_to_a_folder_is_refused_and_not_retried(blog: Blog, tmp_path: Path) -> None:
    with blog.store() as store:
        store.users.set_source("alice", f"dir:{tmp_path}")
    blog.github.set_files({"articles/a.md": article("A")})

    # On Lambda: accepted, then refused by the worker with a 4xx, which Lambda does not retry
    result = blog.deliver_via_lambda(delivery="refused")

    assert result["statusCode"] == 409
    record = delivery(blog, "refused")
    assert record.outcome == "failed" and record.error is not None
    assert "set-source --name alice --source github:" in record.error
