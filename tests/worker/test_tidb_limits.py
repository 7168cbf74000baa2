"""Pushes that would pass TiDB's size limits without the bounds, on the TiDB-faithful test database: a
row of 6 MiB or more (error 8025) and a transaction over 100 MiB (8004) never reach the server."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from function.articles.parse import parse_article
from function.sources.gitsha import git_blob_sha
from function.store.backends import open_database
from function.store.batching import article_bytes, transaction_batches
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit.blog_checks import delivery, served, stored
from tests.kit.blog_fixtures import USER, Blog, article
from tests.kit.mariadb import ServerInfo
from tests.kit.tidb_triggers import TXN_LIMIT

pytestmark = pytest.mark.mysql

MiB = 1024 * 1024


@pytest.fixture
def db_url(tidb_url: str) -> str:
    """The blog's database: MariaDB behind the relay that enforces what TiDB enforces."""
    return tidb_url


def heading_heavy_article(size: int = MiB) -> bytes:
    """A megabyte of long Japanese headings (1,152 of 300 characters): within the Markdown and HTML caps
    and quick to render (0.2 s of CPU), but its Markdown (1.0 MB), HTML (4.2 MB) and table of contents
    (4.2 MB) make a row of 9 MiB, past TiDB's 6 MiB."""
    lines = ["---", 'title: "Heavy"', "publish: true", "---", ""]
    count = 0
    while sum(len(line.encode()) + 1 for line in lines) < size - 4000:
        lines.append(f"## {count}" + "見" * 300)
        count += 1
    return ("\n".join(lines) + "\n").encode()


def test_a_heading_heavy_megabyte_fails_alone_and_the_other_articles_are_served(blog: Blog) -> None:
    # GIVEN two ordinary articles pushed with a file of a megabyte of headings
    blog.github.set_files(
        {
            "articles/a.md": article("A"),
            "articles/b.md": article("B"),
            "articles/heavy.md": heading_heavy_article(),
        }
    )

    # WHEN the push is processed
    blog.push(delivery="heavy")

    # THEN the ordinary articles are served, and the heavy file failed alone, its size named
    assert set(served(blog)) == {"a", "b"}
    record = delivery(blog, "heavy")
    assert record.failed == 1 and record.succeeded == 2
    assert record.error is not None and "heavy" in record.error and "MB" in record.error


def real_shaped_body(number: int) -> str:
    """An article of about 160 KB a row once rendered: twelve sections of prose in Japanese and English,
    a list and a long code block (left unhighlighted, so 2,000 of them render in seconds)."""
    sections = []
    prose = "TiDB はキーと値の組で行を保存します。A row is one key-value pair: a column read reads all. "
    for section in range(12):
        code = "\n".join(
            f"def handler_{section}_{k}(event, context):\n    return {{'status': {k}, 'body': \"ok\"}}"
            for k in range(76)
        )
        sections += [
            f"## 第{section}節 Section {section} of article {number}",
            (prose * 6).strip(),
            "- one with `code`\n- two with [a link](https://example.com/x)\n- three",
            f"```text\n{code}\n```",
        ]
    return "\n\n".join(sections)


def seed_synced_articles(blog: Blog, server: ServerInfo, count: int) -> int:
    """``count`` real-shaped articles stored as a sync leaves them (rendered once, written under new
    slugs in the sync's own bounded transactions, straight to the server: the seeding is not what is
    tested, and the relay would take minutes over it); the bytes of what they hold (Markdown, HTML,
    table of contents and the rest)."""
    data = article("Real-shaped", body=real_shaped_body(0))
    parsed = parse_article("articles/big0000.md", git_blob_sha(data), data)
    articles = [
        replace(parsed, slug=f"big{i:04}", path=f"articles/big{i:04}.md", title=f"Real-shaped {i}")
        for i in range(count)
    ]
    direct = open_database(server.url_for(blog.db.database))
    try:
        with connection(direct):
            # The relay's size checks are triggers on the tables, which count this session's writes
            # too, but only the relay resets their count between transactions: no limit here.
            direct.execute_sql("SET @tidb_txn_limit = 9223372036854775807")
            store = PeeweeStore(direct)
            user = store.users.get_user(USER)
            assert user is not None
            for batch in transaction_batches(articles):
                index = store.reconcile.load_index(user.id)
                store.reconcile.apply(user.id, batch, [], datetime(2026, 1, 1), index=index)
            store.users.confirm_removal(user.id, count)
            return sum(article_bytes(a) for a in articles)
    finally:
        direct.close()


@pytest.mark.timeout(600)
def test_deleting_2000_real_shaped_articles_in_one_push_archives_them_all(
    blog: Blog, mariadb_server: ServerInfo
) -> None:
    # GIVEN a blog of 2,000 real-shaped articles (about 160 KB a row: 320 MB, three times what TiDB
    # takes in one transaction) and one more, synced; a person agreed to their removal (a push that
    # empties most of a blog is held otherwise)
    blog.github.set_files({"articles/keep.md": article("Keep")})
    blog.push(delivery="first")
    total = seed_synced_articles(blog, mariadb_server, 2_000)
    # Half of them, the 1,000 a transaction cut by count took, are already past TiDB's limit.
    assert total // 2 > TXN_LIMIT

    # WHEN one push deletes the 2,000 (TiDB rewrites each whole row to archive it)
    blog.github.set_files({"articles/keep.md": article("Keep", body="Kept.")})
    blog.push(delivery="delete")

    # THEN every one is archived, in transactions TiDB accepts, and only the one left is served
    record = delivery(blog, "delete")
    assert record.outcome == "success", record.error
    assert record.archived == 2_000
    assert sum(a.archived for a in stored(blog).values()) == 2_000
    assert set(served(blog)) == {"keep"}
