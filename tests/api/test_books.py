"""The book routes: Zenn's chapter order, the shapes, drafts hidden, 404s, pages, caching and CORS."""

from __future__ import annotations

import gzip
from datetime import datetime
from pathlib import Path

import pytest

from function.sources.folder import DirectorySource
from function.sources.port import RepoRef
from function.store.connection import connection
from function.store.facade import PeeweeStore
from function.worker.sync.books import BookSync
from tests.api.conftest import ORIGIN, SITE, USER, ReadApi
from tests.kit.builders import article

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "zenn-books"
SYNCED = datetime(2026, 1, 2, 3, 4, 5)


@pytest.fixture
def books_api(make_api: object) -> ReadApi:
    api: ReadApi = make_api(cors_allowed_origins=(ORIGIN,))  # type: ignore[operator]
    source = DirectorySource(FIXTURE)
    with connection(api.db):
        store = PeeweeStore(api.db)
        snapshot = source.snapshot(RepoRef("octo/blog", "main"))
        result = BookSync(store.books, source, clock=lambda: SYNCED).run(
            api.user_ids[USER], RepoRef("o/b", None), snapshot
        )
    assert result.failed == 0
    return api


def test_books_list_serves_published_books_as_summaries(books_api: ReadApi) -> None:
    answer = books_api.get(f"/users/{USER}/books")

    assert answer.status_code == 200
    body = answer.get_json()
    assert body["nextCursor"] is None
    by_slug = {b["slug"]: b for b in body["books"]}
    assert set(by_slug) == {"lambda-field-notes", "pulumi-in-practice"}  # the draft is hidden
    pulumi = by_slug["pulumi-in-practice"]
    assert set(pulumi) == {
        "bookId",
        "slug",
        "title",
        "summary",
        "tags",
        "cover",
        "chapterCount",
        "publishedAt",
        "createdAt",
        "updatedAt",
    }
    assert pulumi["title"] == "Pulumi in practice" and pulumi["summary"] == "" and pulumi["tags"] == []
    assert pulumi["cover"] == "books/pulumi-in-practice/cover.png"
    assert pulumi["chapterCount"] == 3
    assert pulumi["publishedAt"] == "2026-01-02T03:04:05.000000Z"
    assert by_slug["lambda-field-notes"]["tags"] == ["aws", "lambda", "python"]
    assert by_slug["lambda-field-notes"]["cover"] is None


def test_a_book_lists_its_chapters_in_zenn_order(books_api: ReadApi) -> None:
    listed = books_api.get(f"/users/{USER}/books/lambda-field-notes").get_json()
    numbered = books_api.get(f"/users/{USER}/books/pulumi-in-practice").get_json()

    assert listed["chapters"] == [
        {"slug": "intro", "title": "Introduction", "position": 1},
        {"slug": "cold-starts", "title": "Cold starts", "position": 2},
        {"slug": "1.packaging", "title": "Packaging", "position": 3},
    ]
    assert [c["slug"] for c in numbered["chapters"]] == ["stacks", "components", "testing"]
    assert numbered["chapterCount"] == 3


def test_a_chapter_is_rendered_like_an_article(books_api: ReadApi) -> None:
    answer = books_api.get(f"/users/{USER}/books/lambda-field-notes/chapters/cold-starts")

    assert answer.status_code == 200
    chapter = answer.get_json()
    assert set(chapter) == {"slug", "title", "position", "content", "contentHtml", "toc", "book", "updatedAt"}
    assert (chapter["slug"], chapter["title"], chapter["position"]) == ("cold-starts", "Cold starts", 2)
    assert chapter["content"].startswith("## Measuring")
    assert "<h2" in chapter["contentHtml"] and "Import less." in chapter["contentHtml"]
    assert [entry["text"] for entry in chapter["toc"]] == ["Measuring", "Shrinking"]
    assert chapter["book"]["slug"] == "lambda-field-notes" and "chapters" not in chapter["book"]


@pytest.mark.parametrize(
    "path",
    [
        "/users/alice/books/no-such-book-here",
        "/users/alice/books/draft-book-notes",
        "/users/alice/books/draft-book-notes/chapters/start",
        "/users/alice/books/lambda-field-notes/chapters/unfinished",
        "/users/alice/books/lambda-field-notes/chapters/nope",
        "/users/nobody/books",
    ],
)
def test_unknown_or_unpublished_books_and_chapters_are_404(books_api: ReadApi, path: str) -> None:
    answer = books_api.get(path)

    assert answer.status_code == 404
    assert answer.get_json()["error"] == "NOT_FOUND"
    assert answer.get_json()["message"]


def test_books_page_with_the_signed_cursor(books_api: ReadApi) -> None:
    first = books_api.get(f"/users/{USER}/books?limit=1").get_json()
    second = books_api.get(f"/users/{USER}/books", query_string={"limit": "1", "cursor": first["nextCursor"]})

    # Same publication time: ties by slug descending.
    assert [b["slug"] for b in first["books"]] == ["pulumi-in-practice"]
    assert [b["slug"] for b in second.get_json()["books"]] == ["lambda-field-notes"]
    assert second.get_json()["nextCursor"] is None
    forged = books_api.get(f"/users/{USER}/books?cursor=abc.def")
    assert forged.status_code == 400 and forged.get_json()["error"] == "BAD_REQUEST"
    assert books_api.get(f"/users/{USER}/books?limit=0").status_code == 400


def test_an_articles_cursor_is_refused_by_the_books_list(books_api: ReadApi) -> None:
    books_api.add([article("one"), article("two")], SYNCED)
    cursor = books_api.get(f"/users/{USER}/articles?limit=1").get_json()["nextCursor"]
    assert cursor

    answer = books_api.get(f"/users/{USER}/books", query_string={"cursor": cursor})

    assert answer.status_code == 400 and answer.get_json()["error"] == "BAD_REQUEST"


def test_book_routes_cache_compress_and_answer_cors(books_api: ReadApi) -> None:
    path = f"/users/{USER}/books/lambda-field-notes/chapters/cold-starts"
    first = books_api.get(path, headers={"Accept-Encoding": "gzip", "Origin": ORIGIN})

    assert first.headers["ETag"] and first.headers["Access-Control-Allow-Origin"] == ORIGIN
    body = gzip.decompress(first.data) if first.headers.get("Content-Encoding") == "gzip" else first.data
    assert b"cold-starts" in body
    again = books_api.get(path, headers={"If-None-Match": first.headers["ETag"], "Accept-Encoding": "gzip"})
    assert again.status_code == 304
    other = books_api.get(f"/users/{USER}/books", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_sitemap_names_published_books(books_api: ReadApi) -> None:
    body = books_api.get(f"/users/{USER}/sitemap.xml").data.decode()

    assert f"<loc>{SITE}/books/lambda-field-notes</loc>" in body
    assert f"<loc>{SITE}/books/pulumi-in-practice</loc>" in body
    assert "draft-book-notes" not in body
