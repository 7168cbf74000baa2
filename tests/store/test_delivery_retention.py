"""Old delivery records deleted in bounded rounds, each repository's last sync kept (``last_sync`` still
answers, however quiet the blog), and the index ``last_sync`` reads: on SQLite and MariaDB."""

from __future__ import annotations

from datetime import timedelta

import peewee

from function.store.facade import PeeweeStore
from function.store.models import Delivery
from function.worker.retention import forget_old_deliveries
from tests.kit.builders import T0
from tests.kit.statements import count_statements

DAY = timedelta(days=1)
NOW = T0 + 200 * DAY


def delivered(
    store: PeeweeStore,
    delivery_id: str,
    days_ago: float,
    *,
    repository: str = "alice/blog",
    installation: int | None = 101,
    outcome: str = "success",
    head_sha: str | None = "abc",
) -> None:
    received = NOW - timedelta(days=days_ago)
    store.deliveries.start_delivery(delivery_id, "push", installation, repository, received, received)
    store.deliveries.finish_delivery(
        delivery_id,
        head_sha=head_sha,
        processed=1,
        succeeded=1,
        failed=0,
        archived=0,
        outcome=outcome,
        error=None,
        now=received + timedelta(seconds=5),
    )


def ids(store: PeeweeStore) -> set[str]:
    return {row.delivery_id for row in store.deliveries.recent_deliveries(1000)}


def test_records_past_the_retention_go_and_each_repository_keeps_its_last_sync(store: PeeweeStore) -> None:
    # GIVEN alice's deliveries over 150 days (her last sync 120 days ago, then a failure), bob's blog,
    # quiet for 100 days, and a ping
    delivered(store, "a-old", 150)
    delivered(store, "a-last-sync", 120)
    delivered(store, "a-failed", 110, outcome="failed", head_sha=None)
    delivered(store, "a-recent-failure", 10, outcome="failed", head_sha=None)
    delivered(store, "b-first", 130, repository="bob/notes", installation=202)
    delivered(store, "b-last", 100, repository="bob/notes", installation=202, outcome="partial")
    delivered(store, "ping", 95, repository="bob/notes", installation=None, outcome="skipped")

    # WHEN the records older than 90 days are deleted
    report = forget_old_deliveries(store.deliveries, NOW, 90 * DAY)

    # THEN what is left: each repository's last sync, and what is younger
    assert ids(store) == {"a-last-sync", "a-recent-failure", "b-last"}
    assert report.deleted == 4 and report.done
    # AND a replayed push is still compared with the syncs the blogs last made
    last = store.deliveries.last_sync(101, "alice/blog")
    assert last is not None and last.delivery_id == "a-last-sync"
    last = store.deliveries.last_sync(202, "bob/notes")
    assert last is not None and last.delivery_id == "b-last"

    # AND a second sweep finds nothing more to delete
    again = forget_old_deliveries(store.deliveries, NOW, 90 * DAY)
    assert again.deleted == 0 and ids(store) == {"a-last-sync", "a-recent-failure", "b-last"}


def test_a_newer_sync_lets_the_old_last_sync_go(store: PeeweeStore) -> None:
    # GIVEN a last sync kept past the retention
    delivered(store, "kept", 120)
    forget_old_deliveries(store.deliveries, NOW, 90 * DAY)
    assert ids(store) == {"kept"}

    # WHEN the blog syncs again, and the next sweep runs
    delivered(store, "new", 1)
    forget_old_deliveries(store.deliveries, NOW, 90 * DAY)

    # THEN only the new sync is left
    assert ids(store) == {"new"}


def test_deletion_runs_in_bounded_rounds_oldest_first(store: PeeweeStore) -> None:
    # GIVEN 25 old records and a young one
    for n in range(25):
        delivered(store, f"old-{n:02}", 200 - n, outcome="failed", head_sha=None)
    delivered(store, "young", 1)

    # WHEN a sweep may run 2 rounds of 10
    with count_statements(store.db) as statements:
        report = forget_old_deliveries(store.deliveries, NOW, 90 * DAY, per_round=10, max_rounds=2)

    # THEN 20 went, the oldest, each round one DELETE of at most 10 rows; the rest waits for the next
    assert report.deleted == 20 and report.rounds == 2 and not report.done
    assert len(statements.matching("DELETE")) == 2
    assert ids(store) == {f"old-{n:02}" for n in range(20, 25)} | {"young"}

    # AND the next sweep finishes
    report = forget_old_deliveries(store.deliveries, NOW, 90 * DAY, per_round=10, max_rounds=2)
    assert report.deleted == 5 and report.done and ids(store) == {"young"}


def test_last_sync_reads_an_index_of_the_repository_s_deliveries(store: PeeweeStore) -> None:
    # The index a new database has (a migrated one gets it from its migration step)
    indexes = {(tuple(i.columns), i.unique) for i in store.db.get_indexes(Delivery._meta.table_name)}
    assert (("installation_id", "repository", "started_at", "delivery_id"), False) in indexes

    # AND the database's plan for last_sync uses it instead of reading every delivery
    for n in range(30):
        delivered(store, f"d-{n:02}", 30 - n, repository=f"user{n % 5}/blog", installation=100 + n % 5)
    query = (
        Delivery.select(Delivery.delivery_id)
        .where(
            (Delivery.installation_id == 101)
            & (Delivery.repository == "user1/blog")
            & Delivery.head_sha.is_null(False)
            & Delivery.outcome.in_(("success", "partial"))
        )
        .order_by(Delivery.started_at.desc(), Delivery.delivery_id.desc())
        .limit(1)
    )
    sql, params = query.bind(store.db).sql()
    plan = " ".join(str(row) for row in store.db.execute_sql("EXPLAIN " + _explain(store.db, sql), params))
    assert "deliveries_installation_id_repository_started_at_delivery_id" in plan, plan


def _explain(db: peewee.Database, sql: str) -> str:
    """SQLite's plan is ``EXPLAIN QUERY PLAN``, MySQL's ``EXPLAIN``."""
    return ("QUERY PLAN " + sql) if isinstance(db, peewee.SqliteDatabase) else sql
