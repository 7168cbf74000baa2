"""The preview's pages as an author reads them: every article and book, drafts marked, problems on the
page of their file, images served, and an edit seen on the next sync."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

from tests.preview.conftest import Previewed, Repository


class _Text(HTMLParser):
    """The visible text of a page, and the elements with a class, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.classed: list[tuple[str, dict[str, str | None]]] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        self.classed.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.parts).split())


def read(html: str) -> _Text:
    parser = _Text()
    parser.feed(html)
    return parser


def test_the_list_shows_every_article_with_its_tags_and_date_and_marks_drafts(
    previewed: Callable[..., Previewed],
) -> None:
    page = read(previewed().page("/"))

    assert "Everything at once" in page.text and "Books next to articles" in page.text
    # The publication date the front matter names, in the articles' zone (Asia/Tokyo by default).
    assert re.search(r"Everything at once .*2024-03-01 09:30 tech aws lambda", page.text)
    # A draft is listed, and says so.
    assert re.search(r"Not yet draft .* draft", page.text)
    entries = [attrs.get("data-slug") for tag, attrs in page.classed if attrs.get("class") == "article-entry"]
    # Drafts first (what the author works on), then as readers see them.
    assert entries[0] == "work-in-progress" and set(entries) >= {"everything", "hello-zenn-books"}


def test_the_list_shows_books_and_a_draft_book_is_marked(previewed: Callable[..., Previewed]) -> None:
    page = read(previewed().page("/"))

    assert "Lambda field notes" in page.text and "Pulumi in practice" in page.text
    assert re.search(r"A draft draft", page.text)


def test_an_article_is_its_stored_html_inside_the_content_class_with_the_stylesheet(
    previewed: Callable[..., Previewed],
) -> None:
    html = previewed().page("/articles/everything")

    assert '<link rel="stylesheet" href="/static/content.css">' in html
    content = html.split('<div class="blog-content">', 1)[1]
    assert '<aside class="msg message">' in content
    assert '<pre class="mermaid">' in content
    assert "<math" in content
    assert '<span class="code-block-filename">hello.py</span>' in content
    assert 'class="link-card"' in content
    # Mermaid is set up as front ends are told to: strict, no HTML labels, run on the inserted nodes.
    assert 'securityLevel: "strict"' in html and "htmlLabels: false" in html
    assert 'mermaid.run({ nodes: document.querySelectorAll(".blog-content .mermaid") })' in html


def test_an_articles_image_is_stored_and_served_by_the_preview(previewed: Callable[..., Previewed]) -> None:
    view = previewed()
    html = view.page("/articles/everything")
    [src] = re.findall(r'<img src="([^"]+)" alt="a red square"', html)

    assert re.fullmatch(r"/assets/[0-9a-f]{64}\.png", src)
    image = view.client.get(src)
    assert image.status_code == 200 and image.mimetype == "image/png"
    assert image.get_data()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_draft_article_has_its_page_marked_draft(previewed: Callable[..., Previewed]) -> None:
    page = read(previewed().page("/articles/work-in-progress"))

    assert "Not yet" in page.text and "draft" in page.text.split("Not yet", 1)[1]


def test_a_book_lists_its_chapters_in_the_configs_order(previewed: Callable[..., Previewed]) -> None:
    page = read(previewed().page("/books/lambda-field-notes"))

    chapters = [attrs["data-slug"] for tag, attrs in page.classed if attrs.get("class") == "chapter-entry"]
    assert chapters == ["intro", "cold-starts", "1.packaging"]


def test_a_chapter_links_to_its_neighbours(previewed: Callable[..., Previewed]) -> None:
    html = previewed().page("/books/lambda-field-notes/cold-starts")

    assert 'rel="prev" href="/books/lambda-field-notes/intro"' in html
    assert 'rel="next" href="/books/lambda-field-notes/1.packaging"' in html
    assert '<div class="blog-content">' in html


def test_a_draft_books_chapters_are_readable_too(previewed: Callable[..., Previewed]) -> None:
    html = previewed().page("/books/draft-book-notes")

    assert "draft" in read(html).text
    assert 'href="/books/draft-book-notes/start"' in html


def test_a_file_that_fails_shows_why_on_its_own_page_and_in_the_list(
    repository: Repository, previewed: Callable[..., Previewed]
) -> None:
    repository.write("articles/broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    view = previewed()

    page = read(view.page("/articles/broken"))
    assert "could not be synced" in page.text and "articles/broken.md" in page.text
    assert "articles/broken.md" in read(view.page("/")).text
    # Another article's page is not blamed for it.
    assert "articles/broken.md" not in read(view.page("/articles/everything")).text


def test_a_warning_shows_on_its_files_page_until_the_file_is_fixed(
    repository: Repository, previewed: Callable[..., Previewed]
) -> None:
    # GIVEN an article whose image is missing from the repository
    path = repository.write(
        "articles/lost.md", '---\ntitle: "Lost"\npublished: true\n---\n![x](/images/gone.png)\n'
    )
    view = previewed()
    assert "images/gone.png" in read(view.page("/articles/lost")).text

    # WHEN the author fixes it and the folder is synced again
    path.write_text('---\ntitle: "Lost"\npublished: true\n---\n![x](/images/red.png)\n', encoding="utf-8")
    view.preview.sync(["articles/lost.md"])

    # THEN the warning is gone from its page
    assert "images/gone.png" not in read(view.page("/articles/lost")).text


def test_an_unknown_article_is_an_html_404(previewed: Callable[..., Previewed]) -> None:
    response = previewed().client.get("/articles/nothing-here")

    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "nothing-here" in response.get_data(as_text=True)


def test_an_edit_shows_on_the_next_sync_and_moves_the_version(
    repository: Repository, previewed: Callable[..., Previewed]
) -> None:
    view = previewed()
    before = view.preview.version
    repository.write("articles/work-in-progress.md", '---\ntitle: "Nearly"\npublished: false\n---\nSoon.\n')

    view.preview.sync(["articles/work-in-progress.md"])

    assert view.preview.version > before
    assert "Nearly" in read(view.page("/articles/work-in-progress")).text


def test_a_sync_that_changes_nothing_leaves_the_version(previewed: Callable[..., Previewed]) -> None:
    view = previewed()
    before = view.preview.version

    view.preview.sync([])

    assert view.preview.version == before


def test_the_event_stream_sends_the_version_a_page_has_not_seen(previewed: Callable[..., Previewed]) -> None:
    view = previewed()
    response = view.client.get(f"/_preview/events?since={view.preview.version - 1}", buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = iter(response.response)

    assert next(chunks) == b"retry: 500\n\n"
    assert next(chunks) == f"data: {view.preview.version}\n\n".encode()
    response.close()


def test_the_environment_cannot_point_the_preview_at_a_real_database_or_bucket(
    previewed: Callable[..., Previewed],
) -> None:
    settings = previewed(
        DATABASE_URL="mysql://admin:pw@prod.example.com:4000/blog",
        ASSET_BUCKET="prod-images",
        AWS_LAMBDA_FUNCTION_NAME="p-st-blog-api",
        ARTICLE_TIMEZONE="UTC",
    ).preview.services.settings

    assert settings.database_url.startswith("sqlite:///") and settings.asset_bucket is None
    assert not settings.lambda_mode
    # What an author sets for how the repository reads is kept.
    assert settings.article_timezone == "UTC"
