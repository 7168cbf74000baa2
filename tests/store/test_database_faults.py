"""Database faults seen from outside: the database unreachable at start, the connection dropped in the
middle of the reconcile's transaction, and the per-user lock held by another delivery.

The store's own tests (tests/store/test_faults.py, test_lock.py) kill connections around single store
calls; these run whole deliveries through the app and the Lambda handler's pass-through."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask

from function.app import create_app
from function.aws.dispatch import dispatch
from function.errors import PassThroughFailed
from function.services import Services
from function.settings import Settings
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.schema import create_tables
from function.worker.sync import Worker
from tests.kit.answers import contract_counts
from tests.kit.blog_checks import closed_port, delivery, gate_blob, served, stored, synced_head
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import SECRET, github_headers, push_payload
from tests.kit.fakes import RecordingInvoker
from tests.kit.github_fixtures import INSTALLATION_ID, REPO, GitHubClientParts
from tests.kit.github_standin import GitHubStandIn
from tests.kit.mariadb import server_from_url

DB_PASSWORD = "db-pass-9f2c71e4"  # a test value that must never be echoed


def push_body() -> bytes:
    return json.dumps(push_payload(installation_id=INSTALLATION_ID, repo=REPO)).encode()


@pytest.fixture
def unreachable_db_settings(github_url: str) -> Settings:
    """Settings whose database is a MySQL URL (with a password) on a port nobody listens on."""
    return Settings(
        webhook_secret=SECRET,
        github_app_id="12345",
        github_api_url=github_url,
        database_url=f"mysql://blogapi:{DB_PASSWORD}@127.0.0.1:{closed_port()}/blog",
    )


@pytest.fixture
def github_url(make_github_source: Callable[..., GitHubClientParts]) -> str:
    return make_github_source().source.api_url


def test_database_unreachable_at_start_answers_503_and_the_handler_raises_for_retry(
    unreachable_db_settings: Settings, make_github_source: Callable[..., GitHubClientParts]
) -> None:
    # GIVEN the function on Lambda whose database refuses connections
    settings = Settings(**{**unreachable_db_settings.__dict__, "lambda_function_name": "d-st-blog-api"})
    invoker = RecordingInvoker()
    app = create_app(services=Services(settings, source=make_github_source().source, invoker=invoker))
    body = push_body()
    # WHEN GitHub delivers a push THEN the accept path does not need the database: 202
    accepted = app.test_client().post("/webhooks/github", data=body, headers=github_headers(body))
    assert accepted.status_code == 202

    # WHEN Lambda runs the queued event
    started = time.monotonic()
    with pytest.raises(PassThroughFailed) as raised:
        dispatch(app, json.loads(invoker.payloads[-1]), None)
    elapsed = time.monotonic() - started

    # THEN /events answered 503 UNAVAILABLE quickly, so the handler raised and Lambda will retry;
    # the answer names the problem without the database password
    assert "answered 503" in str(raised.value) and '"UNAVAILABLE"' in str(raised.value)
    assert DB_PASSWORD not in str(raised.value)
    assert elapsed < 3


def test_database_unreachable_in_inline_mode_answers_github_503_without_the_password(
    unreachable_db_settings: Settings, make_github_source: Callable[..., GitHubClientParts]
) -> None:
    # GIVEN the app in inline mode whose database refuses connections
    app = create_app(services=Services(unreachable_db_settings, source=make_github_source().source))
    body = push_body()
    # WHEN GitHub delivers a push
    answer = app.test_client().post("/webhooks/github", data=body, headers=github_headers(body))
    # THEN GitHub records a failure it can redeliver, and the body holds no password
    assert answer.status_code == 503
    assert answer.get_json()["error"] == "UNAVAILABLE"
    assert DB_PASSWORD not in answer.get_data(as_text=True)
    # nor where the database lives: the details are in the log, the answer says what happened
    assert "127.0.0.1" not in answer.get_data(as_text=True)
    assert answer.get_json()["message"] == "the database is unavailable; try again later"


V1 = {
    "articles/a.md": article("A", tags=("tech/aws",)),
    "articles/b.md": article("B", tags=("life",)),
    "articles/c.md": article("C"),
}
V2 = {
    "articles/a.md": article("A2", tags=("tech/gcp",), body="Edited."),
    "articles/b.md": None,  # deleted: to be archived
    "articles/d.md": article("D", tags=("new/tag",)),
}


@pytest.fixture
def drop_connection_during_archive(blog: Blog, db_url: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``arm()`` sets a one-shot fault: the worker's database connection dies after the article upsert,
    while the archive runs, inside the reconcile's transaction. It returns ``fired()``: waits until the
    fault is over and returns what it recorded.

    MariaDB: the whole transaction reaches the server in one round trip, so the fault is on the server:
    a trigger sleeps in the archive's UPDATE and an admin session KILLs the sleeping connection (then
    drops the trigger, so Lambda's retry runs clean). SQLite: statements run one by one, and a Peewee
    query hook (its public extension point) fails the step after the upsert with a disk I/O error."""
    fired: list[str] = []
    watcher: threading.Thread | None = None
    stop = threading.Event()

    def settled() -> list[str]:
        if watcher is not None:
            watcher.join(timeout=15)
        return fired

    def arm() -> Callable[[], list[str]]:
        nonlocal watcher
        if db_url.startswith("mysql"):
            with blog.store():
                blog.db.execute_sql(
                    "CREATE TRIGGER fault_sleep BEFORE UPDATE ON articles FOR EACH ROW "
                    "SET @fault_slept = IF(NEW.archived AND NOT OLD.archived, SLEEP(30), 0)"
                )
            admin = server_from_url(request.getfixturevalue("mysql_server")).connect()
            admin.select_db(blog.db.database)

            def kill_once() -> None:
                cursor = admin.cursor()
                while not stop.wait(0.02):
                    cursor.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE STATE = 'User sleep'")
                    row = cursor.fetchone()
                    if row:
                        cursor.execute(f"KILL {int(row[0])}")
                        cursor.execute("DROP TRIGGER fault_sleep")
                        fired.append(f"killed session {row[0]} in the archive")
                        break
                admin.close()

            watcher = threading.Thread(target=kill_once)
            watcher.start()
        else:

            def hook(event: Any) -> None:
                if not fired and event.exception is None and event.sql.startswith('INSERT INTO "articles"'):
                    fired.append(event.sql)
                    raise sqlite3.OperationalError("disk I/O error")

            blog.db.query_hooks.append(hook)
        return settled

    yield arm
    stop.set()
    if watcher is not None:
        watcher.join(timeout=10)
    blog.db.query_hooks.clear()


def test_connection_dropped_between_upsert_and_archive_rolls_back_answers_503_and_the_retry_heals(
    blog: Blog, drop_connection_during_archive: Any
) -> None:
    # GIVEN three synced articles, then a commit that edits one, deletes one and adds one
    blog.github.set_files(V1)
    blog.push(delivery="v1")
    before_rows, before_served, before_head = stored(blog), served(blog), synced_head(blog)
    blog.commit(V2)
    # ... and the worker's database connection dropped after the article upsert, during the archive
    fired = drop_connection_during_archive()

    # WHEN Lambda runs the delivery THEN /events answers 5xx and the handler raises (Lambda retries)
    with pytest.raises(PassThroughFailed, match="answered 503"):
        blog.deliver_via_lambda(delivery="v2")
    assert fired(), "the fault never fired: the reconcile no longer upserts then archives"

    # THEN nothing of the transaction is visible: rows, tags, archive flags and the synced head
    assert stored(blog) == before_rows
    assert served(blog) == before_served
    assert synced_head(blog) == before_head
    assert delivery(blog, "v2").outcome != "success"

    # WHEN Lambda retries the same event THEN it is processed in full
    retried = dispatch(blog.lambda_app(), json.loads(blog.invoker.payloads[-1]), None)
    assert contract_counts(retried["body"]) == {
        "status": "processed",
        "processed": 3,
        "succeeded": 3,
        "failed": 0,
    }
    assert {slug: a["title"] for slug, a in served(blog).items()} == {"a": "A2", "c": "C", "d": "D"}
    assert served(blog)["a"]["tags"] == ["tech/gcp"]
    assert stored(blog)["b"].archived
    assert delivery(blog, "v2").outcome == "success"


class LockTimeoutServices(Services):
    """The app's Services with a short per-user lock wait (the app has no setting for it; the worker
    takes ``lock_timeout_s``)."""

    lock_timeout_s = 0.5

    def worker(self, store: Any) -> Worker:
        return Worker(
            store,
            self.source(),
            articles_dir=self.settings.articles_dir,
            allow_raw_html=self.settings.allow_raw_html,
            lock_timeout_s=self.lock_timeout_s,
        )


def lambda_app_with_short_lock(blog: Blog) -> Flask:
    settings = Settings(**{**blog.settings.__dict__, "lambda_function_name": "d-st-blog-api"})
    return create_app(
        services=LockTimeoutServices(settings, source=blog.source, database=blog.db, invoker=blog.invoker)
    )


def run_in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Run ``target`` in a thread; its result (or exception) lands in the returned list."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(target())
        except BaseException as exc:  # handed back to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_second_delivery_waits_for_the_lock_and_ends_at_once_behind_a_sync_of_its_head(
    blog: Blog,
) -> None:
    # GIVEN a delivery in progress, held inside the user's lock by a slow blob
    blog.github.set_files({"articles/a.md": article("A"), "articles/b.md": article("B")})
    gate = gate_blob(blog.github, article("A"))
    first, first_out = run_in_thread(lambda: blog.push(delivery="first"))
    assert gate.reached.wait(10), "the first delivery never fetched its blob"

    # WHEN a second delivery for the same user arrives
    second, second_out = run_in_thread(lambda: blog.push(delivery="second"))
    second.join(0.8)
    # THEN it waits while the first holds the lock...
    assert second.is_alive() and not second_out, "the second delivery did not wait for the lock"

    # ...and, once the first has synced the head it pushed, ends at once without reading GitHub
    blog.github.reset_records()
    gate.open()
    first.join(15)
    second.join(15)
    assert contract_counts(first_out[0].get_json()) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 2,
        "failed": 0,
    }
    assert second_out[0].get_json() == {"status": "skipped", "reason": "head already synced"}
    assert blog.github.count("tree") == 0
    assert delivery(blog, "second").started_at >= delivery(blog, "first").finished_at  # type: ignore[operator]
    assert sorted(served(blog)) == ["a", "b"]


def test_lock_wait_that_times_out_answers_503_writes_nothing_and_the_retry_runs(blog: Blog) -> None:
    # GIVEN a delivery in progress, held inside the user's lock, and a function waiting at most 0.5 s
    blog.github.set_files({"articles/a.md": article("A")})
    gate = gate_blob(blog.github, article("A"))
    first, first_out = run_in_thread(lambda: blog.push(delivery="first"))
    assert gate.reached.wait(10)
    app = lambda_app_with_short_lock(blog)
    body = push_body()
    accepted = app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="second")
    )
    assert accepted.status_code == 202
    event = json.loads(blog.invoker.payloads[-1])

    # WHEN Lambda runs the second delivery
    started = time.monotonic()
    with pytest.raises(PassThroughFailed, match="answered 503") as raised:
        dispatch(app, event, None)
    waited = time.monotonic() - started

    # THEN it gave up after its lock wait with a retryable 503, having recorded and written nothing
    assert 0.4 <= waited < 3
    assert "another sync of this user is still running" in str(raised.value)
    with blog.store() as store:
        assert store.deliveries.get_delivery("second") is None

    # WHEN the first finishes and Lambda retries THEN the second delivery runs
    gate.open()
    first.join(15)
    assert first_out[0].status_code == 200
    retried = dispatch(app, event, None)
    assert retried["statusCode"] == 200
    assert delivery(blog, "second").outcome == "success"


def test_a_database_without_tables_answers_503_naming_init_db_and_the_retry_heals(
    tmp_path: Any, github: GitHubStandIn, make_github_source: Callable[..., GitHubClientParts]
) -> None:
    # GIVEN the app on a database nobody ran `blog-api init-db` against
    github.set_files({"articles/a.md": article("A")}, repo=REPO)
    url = f"sqlite:///{tmp_path}/empty.db"
    settings = Settings(webhook_secret=SECRET, database_url=url)
    parts = make_github_source()
    app = create_app(services=Services(settings, source=parts.source))
    body = push_body()

    # WHEN GitHub delivers a push and a reader asks for the articles
    pushed = app.test_client().post("/webhooks/github", data=body, headers=github_headers(body))
    read = app.test_client().get("/users/alice/articles")

    # THEN both get 503 (retryable: redelivery works once the tables exist) saying what to run
    for answer in (pushed, read):
        assert answer.status_code == 503
        assert answer.get_json() == {
            "error": "UNAVAILABLE",
            "message": "the database has no blog-api tables yet: run `blog-api init-db` against it",
        }
    # WHEN the operator runs init-db (and registers the user) and GitHub redelivers THEN it syncs
    db = open_database(url)
    with connection(db):
        create_tables(db)
        PeeweeStore(db).users.add_user("alice", "a@example.com", INSTALLATION_ID, REPO)
    db.close()
    again = app.test_client().post("/webhooks/github", data=body, headers=github_headers(body))
    assert again.status_code == 200, again.get_json()


@pytest.mark.mysql
def test_a_wrong_database_password_answers_503_with_server_and_code_in_the_log(
    mysql_url: str,
    make_github_source: Callable[..., GitHubClientParts],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the app whose DATABASE_URL has credentials the (real) server refuses
    info = server_from_url(mysql_url)
    url = f"mysql://blogapi_nobody:{DB_PASSWORD}@{info.host}:{info.port}/blog"
    settings = Settings(webhook_secret=SECRET, github_app_id="12345", database_url=url)
    app = create_app(services=Services(settings, source=make_github_source().source))
    body = push_body()
    capsys.readouterr()
    # WHEN GitHub delivers a push
    answer = app.test_client().post("/webhooks/github", data=body, headers=github_headers(body))
    # THEN it is a dependency failure (retryable), not a bug: 503 UNAVAILABLE, never 500 INTERNAL
    assert answer.status_code == 503
    assert answer.get_json()["error"] == "UNAVAILABLE"
    # and the log names the server and the driver's code, never the password
    logs = capsys.readouterr().err
    [line] = [json.loads(x) for x in logs.splitlines() if '"Dependency unavailable"' in x]
    assert f"{info.host}:{info.port}" in line["error"] and "error 1045" in line["error"]
    assert DB_PASSWORD not in logs and DB_PASSWORD not in answer.get_data(as_text=True)
    assert "Unhandled error" not in logs
