"""The previous design, rendered honestly, to measure ours against.

What it did on every push: list the articles folder through the Contents API, fetch every file through the
Contents API (base64 JSON), parse each one, and for each article run two SELECTs and one upsert through
Peewee: the stored row (to keep ``createdAt`` / ``publishedAt`` and decide ``updatedAt``), the upsert, and
the row read back for its id. Then one UPDATE archives what left the folder.

It gets the same help as ours wherever the old algorithm allows it: the same GitHub stand-in, installation
token (cached), HTTP client and parser; file fetches ``fetch_workers`` at a time (ours' bound, where a
loop would fetch one by one); the same MariaDB through the same relay, connected once per push. Its table is
its own simple one (tags as a JSON column), so it pays for no tag tables, no lock and no delivery log.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import peewee

from bench.measure import Measured, measuring
from bench.rig import INSTALLATION_ID, Rig
from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle
from function.github.app_auth import API_VERSION, GITHUB_JSON, GitHubAppAuth
from function.github.http import HttpClient
from function.store.connection import connection
from function.store.models import User

ARTICLES_DIR = "articles"


class BaselineArticle(peewee.Model):
    """The previous design's one table of articles."""

    id = peewee.AutoField()
    user_id = peewee.IntegerField()
    slug = peewee.CharField(max_length=190)
    path = peewee.CharField(max_length=255)
    title = peewee.CharField(max_length=500)
    type = peewee.CharField(max_length=64, null=True)
    description = peewee.TextField(null=True)
    thumbnail = peewee.CharField(max_length=2048, null=True)
    content = peewee.TextField()
    content_html = peewee.TextField()
    content_hash = peewee.CharField(max_length=64)
    tags = peewee.TextField()  # JSON list of tag paths
    publish = peewee.BooleanField()
    archived = peewee.BooleanField(default=False)
    published_at = peewee.DateTimeField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "baseline_articles"
        indexes = ((("user_id", "slug"), True),)


def create_table(db: peewee.Database) -> None:
    """The baseline's table, with LONGTEXT content as ours has (set-up, not measured)."""
    with db.bind_ctx([BaselineArticle]):
        db.create_tables([BaselineArticle])
    for column in ("content", "content_html"):
        db.execute_sql(f"ALTER TABLE baseline_articles MODIFY {column} LONGTEXT NOT NULL")


class Baseline:
    """One push, the previous way, on ``db`` (through the relay), reading ``repository`` at ``branch``."""

    def __init__(
        self, auth: GitHubAppAuth, http: HttpClient, api_url: str, *, fetch_workers: int = 8
    ) -> None:
        self._auth = auth
        self._http = http
        self._api_url = api_url.rstrip("/")
        self._fetch_workers = fetch_workers

    def run_push(self, rig: Rig, db: peewee.Database, repository: str, branch: str = "main") -> Measured:
        with measuring(rig) as measured, connection(db), db.bind_ctx([BaselineArticle, User]):
            user_id = User.select(User.id).where(User.github_installation_id == INSTALLATION_ID).scalar()
            listing = self._get(repository, f"contents/{ARTICLES_DIR}", branch)
            paths = [e["path"] for e in listing if e["type"] == "file" and e["name"].endswith(".md")]
            now = datetime.now(UTC).replace(tzinfo=None)
            written = 0
            for article in self._fetch_and_parse(repository, branch, paths):
                written += self._save(user_id, article, now)
            slugs = [p[len(ARTICLES_DIR) + 1 : -3] for p in paths]
            BaselineArticle.update(archived=True).where(
                BaselineArticle.user_id == user_id, BaselineArticle.slug.not_in(slugs)
            ).execute()
        measured.notes = {"fetched": len(paths), "written": written, "processed": len(paths)}
        return measured

    def _get(self, repository: str, path: str, branch: str) -> Any:
        token = self._auth.installation_token(INSTALLATION_ID)
        answer = self._http.request(
            "GET",
            f"{self._api_url}/repos/{repository}/{path}?ref={branch}",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": GITHUB_JSON,
                "X-GitHub-Api-Version": API_VERSION,
            },
        )
        if answer.status != 200:
            raise RuntimeError(f"baseline: GitHub answered {answer.status} for {path}")
        return answer.json()

    def _fetch_and_parse(self, repository: str, branch: str, paths: list[str]) -> Iterator[ParsedArticle]:
        def fetch(path: str) -> ParsedArticle:
            entry = self._get(repository, f"contents/{path}", branch)
            content = base64.b64decode(entry["content"])
            return parse_article(path, entry["sha"], content, articles_dir=ARTICLES_DIR)

        with ThreadPoolExecutor(max_workers=self._fetch_workers) as pool:
            yield from pool.map(fetch, paths)

    def _save(self, user_id: int, article: ParsedArticle, now: datetime) -> int:
        """Two SELECTs and one upsert; returns 1 when the content changed."""
        key = (BaselineArticle.user_id == user_id) & (BaselineArticle.slug == article.slug)
        old = (
            BaselineArticle.select(
                BaselineArticle.content_hash,
                BaselineArticle.published_at,
                BaselineArticle.created_at,
                BaselineArticle.updated_at,
            )
            .where(key)
            .first()
        )
        same = old is not None and old.content_hash == article.content_hash
        published_at = (old.published_at if old else None) or (now if article.publish else None)
        row = {
            "user_id": user_id,
            "slug": article.slug,
            "path": article.path,
            "title": article.title,
            "type": article.type,
            "description": article.description,
            "thumbnail": article.thumbnail,
            "content": article.content,
            "content_html": article.content_html,
            "content_hash": article.content_hash,
            "tags": json.dumps(list(article.tags)),
            "publish": article.publish,
            "archived": False,
            "published_at": published_at,
            "created_at": old.created_at if old else now,
            "updated_at": old.updated_at if same and old else now,
        }
        preserve = [getattr(BaselineArticle, name) for name in row if name not in ("user_id", "slug")]
        BaselineArticle.insert(row).on_conflict(preserve=preserve).execute()
        BaselineArticle.select(BaselineArticle.id).where(key).scalar()
        return 0 if same else 1
