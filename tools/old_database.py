"""Record a database made by an earlier commit of blog-api, for the migration tests to load.

    .venv/bin/python -m tools.old_database eaf72ea tests/fixtures/old-databases/eaf72ea.json

The commit's own code (``git archive``) runs in a subprocess, on this checkout's virtualenv: it creates its
tables on SQLite and on a throwaway MariaDB (or the server of ``TEST_DATABASE_URL``), fills the SQLite
database the way that version does (two users, a full sync of a small repository with tagged articles,
a draft and books, and delivery records, one of them with a transient failure), and asks its read routes
for every page. The file holds the statements that made each backend's tables, every row, and those
answers: ``tests/store/test_migrations.py`` builds the old database from it on either backend, migrates
it, and asks the same questions again.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# The repository the old version syncs: three articles written for this file (tags, a table of contents,
# a code block, a draft) and the books of tests/fixtures/zenn-books.
ARTICLES = {
    "lambda-cold-starts.md": """---
title: "Measuring Lambda cold starts"
emoji: "🧊"
type: "tech"
topics: ["aws", "lambda"]
published: true
published_at: 2025-03-01 09:30
---

## Init duration

`Init Duration` shows only on a cold start.

```python
def handler(event, context):
    return {"statusCode": 200}
```

## What helps

Smaller packages, and SnapStart.
""",
    "tidb-named-locks.md": """---
title: "Named locks on TiDB"
emoji: "🔒"
type: "tech"
topics: ["tidb", "mysql", "aws"]
published: true
published_at: 2025-04-12 18:00
---

`GET_LOCK` waits at least one second on TiDB, and a lock holds across the whole cluster.
""",
    "autumn-walk.md": """---
title: "An autumn walk"
emoji: "🍁"
type: "idea"
topics: ["life"]
published: true
published_at: 2025-10-05 07:00
---

Kumotori in October: cold at the top, and *worth it*.
""",
    "unfinished-draft.md": """---
title: "Not yet"
type: "tech"
topics: ["aws"]
published: false
---

A draft is stored, and not served.
""",
}

# What the old version's record of a delivery said: a success, a transient failure, a time budget that ran
# out (both with the text mark of that version), and a permanent failure.
DELIVERIES = [
    ("d-success", "success", None, False),
    (
        "d-transient",
        "failed",
        "articles/tidb-named-locks.md: blob 0123abcd: GitHub answered 502 [retryable]; "
        "articles/broken.md: front matter is not valid YAML",
        True,
    ),
    (
        "d-budget",
        "failed",
        "time budget reached, 2 files left for the next run [retryable]: articles/a.md, articles/b.md",
        True,
    ),
    ("d-permanent", "partial", "articles/broken.md: front matter is not valid YAML", False),
]

SETTINGS = {
    "webhook_secret": "old-database-secret",
    "site_url": "https://blog.example.com",
    "asset_base_url": "https://assets.example.com",
}

# Run by the old commit's interpreter, inside its source tree: argv = sqlite url, mysql url, repository
# folder, output file, the JSON of DELIVERIES and SETTINGS.
_INSIDE = r"""
import json, sys
from datetime import datetime
from function.app import create_app
from function.services import Services
from function.settings import Settings
from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.store.models import MODELS
from function.store.schema import create_tables

sqlite_url, mysql_url, folder, out, deliveries, settings = sys.argv[1:7]
deliveries, settings = json.loads(deliveries), json.loads(settings)

mysql = open_database(mysql_url)
with connection(mysql):
    create_tables(mysql)
    names = [m._meta.table_name for m in MODELS]
    mysql_ddl = [mysql.execute_sql(f"SHOW CREATE TABLE `{name}`").fetchone()[1] for name in names]
mysql.close()

db = open_database(sqlite_url)
with connection(db):
    create_tables(db)
    store = PeeweeStore(db)
    store.add_user("alice", "alice@example.com", 1, "alice/blog")
    store.add_user("bob", "bob@example.com", 2, None)
values = dict(settings, database_url=sqlite_url, article_source=f"dir:{folder}", asset_dir=f"{folder}.assets")
services = Services(Settings(**values), database=db)
with services.store() as store:
    services.worker(store).sync_user("alice")
when = datetime(2025, 10, 6, 12, 0, 0, 123456)
with connection(db):
    store = PeeweeStore(db)
    for delivery_id, outcome, error, retryable in deliveries:
        store.start_delivery(delivery_id, "push", 1, "alice/blog", when, when)
        store.finish_delivery(
            delivery_id, head_sha="c0ffee" * 6 + "c0ff", processed=4, succeeded=3 if error else 4,
            failed=1 if error else 0, archived=0, outcome=outcome, error=error, now=when,
            written=1, unchanged=3, retryable=retryable,
        )

client = create_app(services=Services(Settings(**values), database=db)).test_client()
paths = ["/users/alice/articles?limit=100", "/users/alice/articles?limit=2", "/users/alice/tags",
         "/users/alice/books", "/users/alice/feed.xml", "/users/alice/sitemap.xml", "/users/bob/articles",
         "/users/nobody/articles", "/users/alice/articles/unfinished-draft"]
answers, seen = [], set()
while paths:
    path = paths.pop(0)
    if path in seen:
        continue
    seen.add(path)
    answer = client.get(path)
    body = answer.get_json() if answer.is_json else answer.get_data(as_text=True)
    answers.append({"path": path, "status": answer.status_code, "body": body})
    if answer.status_code != 200 or not isinstance(body, dict):
        continue
    if path.startswith("/users/alice/articles?"):
        if body["nextCursor"]:
            paths.append(path.split("&cursor=")[0] + "&cursor=" + body["nextCursor"])
        paths += [f"/users/alice/articles/{article['slug']}" for article in body["articles"]]
    elif path == "/users/alice/tags":
        paths += [f"/users/alice/articles?limit=100&tag={tag['path']}" for tag in body["tags"][:3]]
    elif path == "/users/alice/books":
        paths += [f"/users/alice/books/{book['slug']}" for book in body["books"]]
    elif path.startswith("/users/alice/books/") and "/chapters/" not in path:
        paths += [f"{path}/chapters/{chapter['slug']}" for chapter in body.get("chapters", [])[:2]]

# The rows last: the first reader made the page cursors' key, which the answers' cursors are signed with.
with connection(db):
    sqlite_ddl = [row[0] for row in db.execute_sql(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    rows = {}
    for name in names:
        cursor = db.execute_sql(f'SELECT * FROM "{name}" ORDER BY rowid')
        columns = [d[0] for d in cursor.description]
        rows[name] = [dict(zip(columns, row)) for row in cursor.fetchall()]

with open(out, "w", encoding="utf-8") as f:
    json.dump({"sqlite": sqlite_ddl, "mysql": mysql_ddl, "rows": rows, "answers": answers}, f)
"""


def record(commit: str, out: Path) -> None:
    """Write ``out``: what ``commit``'s code made and served (see the module's docstring)."""
    from tests.kit.mariadb import ENV_TEST_DATABASE_URL, ThrowawayMariaDB, server_from_url

    full = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", full], check=True, capture_output=True)
    given = os.environ.get(ENV_TEST_DATABASE_URL)
    server = None if given else ThrowawayMariaDB()
    info = server_from_url(given) if given else server.start()  # type: ignore[union-attr]
    name = f"blogapi_old_{uuid.uuid4().hex[:12]}"
    admin = info.connect()
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
        with tempfile.TemporaryDirectory() as tmp:
            tree, folder = Path(tmp) / "tree", Path(tmp) / "repository"
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(tree, filter="data")
            (folder / "articles").mkdir(parents=True)
            for file_name, text in ARTICLES.items():
                (folder / "articles" / file_name).write_text(text, encoding="utf-8")
            shutil.copytree(REPO_ROOT / "tests" / "fixtures" / "zenn-books" / "books", folder / "books")
            produced = Path(tmp) / "recorded.json"
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    _INSIDE,
                    f"sqlite:///{tmp}/old.db",
                    info.url_for(name),
                    str(folder),
                    str(produced),
                    json.dumps(DELIVERIES),
                    json.dumps(SETTINGS),
                ],
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree)},
                check=True,
            )
            recorded = json.loads(produced.read_text(encoding="utf-8"))
            # The folder is a temporary one: its path stays out of the file.
            text = json.dumps(
                {"commit": full, "settings": SETTINGS, **recorded}, ensure_ascii=False, indent=1
            )
            out.write_text(text.replace(str(folder), "/repository") + "\n", encoding="utf-8")
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
        admin.close()
        if server is not None:
            server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("commit", help="the commit whose code makes the database (e.g. eaf72ea)")
    parser.add_argument("out", type=Path, help="the JSON file to write")
    args = parser.parse_args(argv)
    record(args.commit, args.out)


if __name__ == "__main__":
    main()
