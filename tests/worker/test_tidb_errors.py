"""TiDB's own refusals during a push, on the TiDB-faithful test database: a transaction over TiDB's
size limit is reported in words (not as refused credentials, not retried), a commit TiDB says is safe
to retry is answered 503 and passes on the retry."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from function.aws.dispatch import dispatch
from function.errors import PassThroughFailed
from tests.kit.blog_checks import delivery, served
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import github_headers
from tests.kit.tidb_proxy import TiDBRelay

pytestmark = pytest.mark.mysql


@pytest.fixture
def db_url(tidb_url: str) -> str:
    """The blog's database: MariaDB behind the relay that enforces what TiDB enforces."""
    return tidb_url


@pytest.fixture
def small_transactions(tidb_relay: TiDBRelay) -> Iterator[None]:
    """TiDB's txn-total-size-limit at 200 KB instead of 100 MiB, so a few articles pass it."""
    with tidb_relay.limits(txn=200_000):
        yield


def test_a_transaction_past_tidbs_size_limit_fails_once_in_words(
    blog: Blog, small_transactions: None
) -> None:
    # GIVEN a push of ten articles of 40 KB each, written in one transaction (400 KB > 200 KB)
    blog.github.set_files({f"articles/a{i}.md": article(f"A{i}", body="x" * 40_000) for i in range(10)})

    # WHEN it is processed
    answer = blog.push(delivery="big")

    # THEN the delivery failed, saying that TiDB refused the transaction as too large (never that it
    # refused the credentials), and that retrying it fails the same way; nothing of it is served
    assert answer.status_code >= 500
    record = delivery(blog, "big")
    assert record.outcome == "failed"
    assert record.error is not None
    assert "error 8004" in record.error and "txn-total-size-limit" in record.error, record.error
    assert "fails the same way when tried again" in record.error
    assert "credentials" not in record.error
    assert served(blog) == {}


def test_a_commit_tidb_calls_safe_to_retry_answers_503_and_the_retry_passes(blog: Blog) -> None:
    # GIVEN the database failing the next article write with TiDB's 8022 (commit failed, rolled back)
    blog.github.set_files({"articles/a.md": article("A")})
    with blog.store() as store:
        store.db.execute_sql(
            "CREATE TRIGGER fail_once BEFORE INSERT ON articles FOR EACH ROW "
            "SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 8022, "
            "MESSAGE_TEXT = 'Error: KV error safe to retry'"
        )

    # WHEN Lambda runs the delivery
    app = blog.lambda_app()
    body = blog.push_body()
    accepted = app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="d")
    )
    assert accepted.status_code == 202
    event = json.loads(blog.invoker.payloads[-1])
    with pytest.raises(PassThroughFailed, match="answered 503"):
        dispatch(app, event, None)

    # THEN the retry, once the database commits again, syncs the article
    with blog.store() as store:
        store.db.execute_sql("DROP TRIGGER fail_once")
    assert dispatch(app, event, None)["statusCode"] == 200
    assert list(served(blog)) == ["a"]
    assert delivery(blog, "d").outcome == "success"
