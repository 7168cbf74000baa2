"""The search index through the commands a person runs: ``sync`` keeps it (edit, rename, delete),
``sync --rebuild`` and ``migrate`` build it again, ``search status`` says how much of the blog it holds,
and a file named like a read route is synced with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from function.search.lexical import MAX_QUERY_TERMS
from function.search.tokens import query_terms
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.migrations.version import SchemaVersion
from function.store.models import SearchDocument, SearchPosting
from tests.kit.cli import run_cli

# Without an embedding provider, each user's semantic line says so.
OFF = "  semantic: off (EMBEDDING_PROVIDER is not set)\n"


def article(title: str, body: str) -> str:
    return "\n".join(["---", f"title: {title}", "published: true", "---", "", body, ""])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    articles = tmp_path / "repo" / "articles"
    articles.mkdir(parents=True)
    (articles / "lambda-cold-start.md").write_text(
        article("Lambdaのコールドスタート", "SnapStartで初期化を速くする。")
    )
    (articles / "tidb-vectors.md").write_text(article("TiDBのベクトル検索", "HNSWインデックスを調整する。"))
    return articles


@pytest.fixture
def env(tmp_path: Path, repo: Path) -> dict[str, str | None]:
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{repo.parent}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return env


def synced(env: dict[str, str | None], *extra: str) -> str:
    result = run_cli("sync", "--user", "demo", *extra, env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def found(env: dict[str, str | None], query: str) -> list[str]:
    db = open_database(str(env["DATABASE_URL"]))
    with connection(db):
        page = PeeweeStore(db).search.lexical_page(
            "demo", query_terms(query, limit=MAX_QUERY_TERMS), limit=10, offset=0
        )
    assert page is not None
    return [view.slug for view, _ in page.hits]


def status(env: dict[str, str | None]) -> str:
    result = run_cli("search", "status", "--user", "demo", env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


def test_the_sync_keeps_the_index_across_edit_rename_and_delete(
    env: dict[str, str | None], repo: Path
) -> None:
    synced(env)
    assert found(env, "SnapStart") == ["lambda-cold-start"]

    (repo / "tidb-vectors.md").write_text(article("TiDBのベクトル検索", "IVFだけを使う。"))
    (repo / "lambda-cold-start.md").rename(repo / "lambda-snapstart.md")
    synced(env)
    assert found(env, "HNSW") == []
    assert found(env, "IVF") == ["tidb-vectors"]
    assert found(env, "SnapStart") == ["lambda-snapstart"]

    (repo / "tidb-vectors.md").unlink()
    synced(env)
    assert found(env, "IVF") == []
    assert status(env) == "demo\n  lexical: 1/1 articles indexed\n" + OFF


def test_rebuild_and_migrate_build_a_lost_index_again(env: dict[str, str | None]) -> None:
    synced(env)
    db = open_database(str(env["DATABASE_URL"]))
    with connection(db):
        SearchPosting.delete().bind(db).execute()
        SearchDocument.delete().bind(db).execute()
    assert found(env, "HNSW") == []
    assert "lexical: 0/2 articles indexed (2 missing" in status(env)
    assert "--rebuild" in status(env)

    synced(env, "--rebuild")
    assert found(env, "HNSW") == ["tidb-vectors"]
    assert status(env) == "demo\n  lexical: 2/2 articles indexed\n" + OFF

    with connection(db):
        SearchPosting.delete().bind(db).execute()
        SchemaVersion.delete().where(SchemaVersion.version >= 11).bind(db).execute()  # 11 and after
    result = run_cli("migrate", env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "11. articles: the lexical search index" in result.stdout
    assert found(env, "HNSW") == ["tidb-vectors"]
    assert found(env, "コールドスタート") == ["lambda-cold-start"]


def test_an_unknown_user_is_a_one_line_error(env: dict[str, str | None]) -> None:
    result = run_cli("search", "status", "--user", "nobody", env=env)
    assert result.exit_code != 0
    assert "nobody" in result.stderr


def test_every_user_without_a_name(env: dict[str, str | None]) -> None:
    synced(env)
    assert run_cli("users", "add", "--name", "other", "--email", "o@example.com", env=env).exit_code == 0
    result = run_cli("search", "status", env=env)
    assert result.stdout == (
        "demo\n  lexical: 2/2 articles indexed\n" + OFF + "other\n  lexical: 0/0 articles indexed\n" + OFF
    )


def test_an_article_named_like_a_route_is_synced_with_a_warning(
    env: dict[str, str | None], repo: Path
) -> None:
    (repo / "search.md").write_text(article("Search", "An article about searching."))
    printed = synced(env)
    assert "warning articles/search.md: the slug 'search' is also the name of a read route" in printed
    assert found(env, "searching") == ["search"]
