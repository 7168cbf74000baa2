"""Opening the database from its URL, the proxy, connections, the upsert and the statement counter."""

from __future__ import annotations

from pathlib import Path

import peewee
import pytest

from function.store.backends import MySQLDatabase, is_mysql, open_database
from function.store.batching import upsert_many
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.models import Tag, User
from function.store.schema import create_tables
from tests.kit.builders import T0, apply_as_worker, article
from tests.kit.statements import count_statements


def test_sqlite_url_creates_the_folder_and_uses_wal(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path}/deep/er/blog.db")
    with connection(db):
        assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
    assert (tmp_path / "deep" / "er" / "blog.db").exists()
    assert not is_mysql(db)


def test_mysql_url_gives_tls_and_time_out_arguments(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    db = open_database(
        "mysql://app:p%40ss@tidb.example:4000/blog"
        f"?ssl_ca={ca}&ssl_verify_identity=true&ssl_verify_cert=false&read_timeout=12"
    )
    params = db.connect_params
    assert is_mysql(db)
    assert db.database == "blog"
    assert (params["host"], params["port"], params["user"], params["password"]) == (
        "tidb.example",
        4000,
        "app",
        "p@ss",
    )
    assert isinstance(db, MySQLDatabase)
    assert db.tls_options["ssl_ca"] == str(ca)
    assert db.tls_options["ssl_verify_identity"] is True
    assert db.tls_options["ssl_verify_cert"] is False  # not the truthy string "false"
    assert not any(key.startswith("ssl") for key in params)  # TLS reaches PyMySQL as one context
    assert (params["connect_timeout"], params["read_timeout"], params["write_timeout"]) == (5, 12, 30)
    assert params["charset"] == "utf8mb4"
    assert db.is_closed()  # opening never connects


@pytest.mark.parametrize(
    "url",
    [
        "postgres://u:p@h/db",
        "mysql://u:p@h:3306/",
        "mysql://u:p@h/db?ssl_verify_cert=maybe",
        "mysql://u:p@h/db?autocommit=0",
        "mysql://u:p@h/db?read_timeout=soon",
        "sqlite://relative.db",
        "sqlite:///",
        "sqlite:////tmp/blog.db?mode=ro",
        "nonsense",
        "mysql://u:s3cret-pw@h/db?ssl_ca=/no/such/ca.pem",
        "mysql://u:s3cret/pw@h:4000/db",
    ],
)
def test_bad_urls_are_refused_naming_the_setting_but_not_the_password(url: str) -> None:
    with pytest.raises(ValueError, match=r"^DATABASE_URL: ") as refused:
        open_database(url)
    assert "s3cret" not in str(refused.value)


def test_models_have_no_database_of_their_own_so_two_databases_never_mix(tmp_path: Path) -> None:
    # GIVEN two databases with the same tables, a user in the first one only
    first = open_database(f"sqlite:///{tmp_path}/first.db")
    second = open_database(f"sqlite:///{tmp_path}/second.db")
    with connection(first), connection(second):
        create_tables(first)
        create_tables(second)
        User.insert(name="alice", email="a@example.com").bind(first).execute()
        # THEN each query sees only the database it is bound to
        assert User.select().bind(first).count() == 1
        assert User.select().bind(second).count() == 0
        # AND a query bound to nothing fails instead of reaching some global database
        with pytest.raises(peewee.InterfaceError):
            User.select().count()


def test_connection_closes_after_the_block_and_reuses_an_open_one(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db):
        with connection(db):
            db.execute_sql("SELECT 1")
        assert not db.is_closed()  # the inner block did not close the outer one's connection
    assert db.is_closed()


def test_create_tables_is_idempotent(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db):
        create_tables(db)
        with count_statements(db) as seen:
            create_tables(db)
        # The second time only reads the schema version (under the migration lock on MySQL): no DDL,
        # no write.
        assert seen.matching("SELECT MAX") and len(seen.matching("SELECT")) == seen.count <= 3
        assert {"users", "articles", "tags", "article_tags", "deliveries"} <= set(db.get_tables())


def test_statement_counter_sees_transaction_control(db_url: str) -> None:
    db = open_database(db_url)
    with connection(db), count_statements(db) as seen:
        with db.atomic():
            db.execute_sql("SELECT 1")
    assert seen.statements == ["BEGIN", "SELECT 1", "COMMIT"]


def test_upsert_many_inserts_then_updates(store: PeeweeStore) -> None:
    db = store.db
    store.users.add_user("alice", "old@example.com", 1)

    statements = upsert_many(
        db,
        User,
        [{"name": "alice", "email": "new@example.com"}, {"name": "bob", "email": "bob@example.com"}],
        conflict_target=[User.name],
        preserve=[User.email],
    )

    assert statements == 1
    alice, bob = store.users.get_user("alice"), store.users.get_user("bob")
    assert alice is not None and alice.email == "new@example.com" and alice.installation_id == 1
    assert bob is not None


def test_upsert_many_of_nothing_sends_nothing(store: PeeweeStore) -> None:
    with count_statements(store.db) as seen:
        assert upsert_many(store.db, Tag, [], conflict_target=[Tag.path], preserve=[Tag.path]) == 0
    assert seen.count == 0


def test_four_byte_characters_round_trip(store: PeeweeStore) -> None:
    user = store.users.add_user("alice", "a@example.com", 1)
    apply_as_worker(
        store, user.id, [article("sushi", title="寿司 🍣", body="𠮷野家 🍣", tags=("食/🍣",))], [], T0
    )
    view = store.reads.published_article("alice", "sushi")
    assert view is not None
    assert (view.title, view.content, view.tags) == ("寿司 🍣", "𠮷野家 🍣", ("食/🍣",))
