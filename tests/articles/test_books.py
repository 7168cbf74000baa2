"""Zenn books as Zenn reads them: config.yaml, chapter order, names and what fails a book."""

from __future__ import annotations

import pytest

from function.articles.book_paths import (
    BookPath,
    book_path,
    book_slug_error,
    chapter_slug_error,
    numbered_chapter,
)
from function.articles.books import (
    missing_chapters,
    parse_book_config,
    parse_chapter,
    place_chapters,
)
from function.errors import ArticleParseError


def _files(*names: str) -> dict[str, BookPath]:
    return {f"books/my-first-book/{name}": BookPath("my-first-book", name) for name in names}


def test_config_reads_zenn_keys_and_ignores_price() -> None:
    config = parse_book_config(
        b'title: "Lambda notes"\nsummary: "A year of it."\ntopics: ["aws", "python"]\n'
        b"published: true\nprice: 500\nchapters:\n  - intro\n  - '1234'\n  - 1.one\n"
    )
    assert (config.title, config.summary, config.tags, config.publish) == (
        "Lambda notes",
        "A year of it.",
        ("aws", "python"),
        True,
    )
    assert config.chapter_slugs == ("intro", "1234", "1.one")
    assert config.warnings == ()


def test_config_without_published_is_a_draft_and_unknown_keys_warn() -> None:
    config = parse_book_config(b"title: T\nsummary: ''\ntopics: []\ncanonical: x\n")
    assert config.publish is False
    assert config.chapter_slugs is None
    assert config.warnings == ("unknown config key 'canonical' (ignored)",)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"title: [unclosed\n", "not valid YAML"),
        (b"- a list\n", "must be a mapping"),
        (b"summary: no title\n", "'title' is required"),
        (b"title: T\nchapters: [intro.md]\n", "without '.md'"),
        (b"title: T\nchapters: [1234]\n", "list of chapter slugs as strings"),
        (b"title: T\nchapters: [Intro]\n", "chapter slug 'Intro' is not valid"),
        (b"title: T\nchapters: [a, a]\n", "names a chapter twice"),
        (b"title: T\ntopics: aws\n", "'topics' must be a list"),
        (b"title: T\npublished: 'yes'\n", "published"),
    ],
)
def test_broken_config_says_why(text: bytes, reason: str) -> None:
    with pytest.raises(ArticleParseError, match=reason):
        parse_book_config(text)


def test_chapters_list_orders_and_leaves_out_unlisted_files() -> None:
    config = parse_book_config(b"title: T\nchapters: [intro, '1.one', end]\n")
    places, warnings = place_chapters(config, _files("end.md", "intro.md", "1.one.md", "draft.md"))
    assert [(p.slug, p.position, p.path) for p in places] == [
        ("intro", 1, "books/my-first-book/intro.md"),
        ("1.one", 2, "books/my-first-book/1.one.md"),
        ("end", 3, "books/my-first-book/end.md"),
    ]
    assert warnings == []


def test_listed_chapters_without_their_file_are_left_out_and_each_is_named_with_its_file() -> None:
    config = parse_book_config(b"title: T\nchapters: [intro, missing, end, gone]\n")
    files = _files("intro.md", "end.md")

    places, warnings = place_chapters(config, files)
    missing = missing_chapters(config, files, "books/my-first-book")

    # The chapters there are served in the list's order, numbered without gaps.
    assert [(p.slug, p.position) for p in places] == [("intro", 1), ("end", 2)]
    assert warnings == []
    assert missing == [
        (
            "books/my-first-book/missing.md",
            "config.yaml's 'chapters' lists 'missing' but there is no missing.md: the book is served "
            "without it (add books/my-first-book/missing.md, or take 'missing' out of 'chapters')",
        ),
        (
            "books/my-first-book/gone.md",
            "config.yaml's 'chapters' lists 'gone' but there is no gone.md: the book is served "
            "without it (add books/my-first-book/gone.md, or take 'gone' out of 'chapters')",
        ),
    ]


def test_a_hundred_listed_chapters_with_27_files_place_the_27_and_name_the_73() -> None:
    slugs = [f"chapter-{n:03d}" for n in range(1, 101)]
    config = parse_book_config(("title: T\nchapters:\n" + "".join(f"  - {s}\n" for s in slugs)).encode())
    present = slugs[::4] + slugs[1:6:4]  # 25 + 2 files, not in order
    files = _files(*(f"{slug}.md" for slug in present))

    places, _ = place_chapters(config, files)
    missing = missing_chapters(config, files, "books/my-first-book")

    assert len(present) == 27
    assert [p.slug for p in places] == [s for s in slugs if s in present]
    assert [p.position for p in places] == list(range(1, 28))
    assert [path for path, _ in missing] == [f"books/my-first-book/{s}.md" for s in slugs if s not in present]
    assert len(missing) == 73


def test_numbered_files_order_by_number_not_by_name() -> None:
    config = parse_book_config(b"title: T\n")
    places, warnings = place_chapters(
        config, _files("10.testing.md", "2.components.md", "1.stacks.md", "notes.md")
    )
    assert [(p.slug, p.position) for p in places] == [("stacks", 1), ("components", 2), ("testing", 3)]
    assert warnings == [
        (
            "books/my-first-book/notes.md",
            "not named <number>.<slug>.md and no 'chapters' list names it (left out)",
        )
    ]


@pytest.mark.parametrize(
    ("names", "reason"),
    [
        (("1.c++.md",), "chapter slug 'c\\+\\+' is not valid"),
        (("1.intro.md", "2.intro.md"), "two chapter files have the slug 'intro'"),
    ],
)
def test_badly_named_numbered_chapters_fail_the_book(names: tuple[str, ...], reason: str) -> None:
    with pytest.raises(ArticleParseError, match=reason):
        place_chapters(parse_book_config(b"title: T\n"), _files(*names))


def test_chapter_renders_like_an_article_with_its_toc() -> None:
    chapter = parse_chapter(
        "books/my-first-book/intro.md",
        "intro",
        "0" * 40,
        b"---\ntitle: Intro\nfree: true\n---\n\n## First\n\nText with **bold**.\n",
    )
    assert chapter.title == "Intro"
    assert "<strong>bold</strong>" in chapter.content_html
    assert [(entry.level, entry.text) for entry in chapter.toc] == [(2, "First")]
    assert chapter.warnings == ()


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"no front matter\n", "no front matter"), (b"---\nfree: true\n---\nBody\n", "'title' is required")],
)
def test_broken_chapter_says_why(content: bytes, reason: str) -> None:
    with pytest.raises(ArticleParseError, match=reason):
        parse_chapter("books/my-first-book/a.md", "a", "0" * 40, content)


def test_book_paths_follow_zenn_names() -> None:
    assert book_path("books/my-first-book/config.yaml") is not None
    assert book_path("books/my-first-book/cover.jpg") is not None
    assert book_path("books/my-first-book/1.intro.md") is not None
    assert book_path("books/.hidden-book-x/config.yaml") is None
    assert book_path("books/my-first-book/_draft.md") is None
    assert book_path("books/my-first-book/images/a.png") is None
    assert book_path("books/my-first-book/notes.txt") is None
    assert book_slug_error("my-first-book") is None
    assert book_slug_error("short") is not None  # Zenn: 12 to 50 characters
    assert book_slug_error("My-First-Book") is not None
    assert chapter_slug_error("1.one") is None
    assert numbered_chapter("12.wrap-up.md") == (12, "wrap-up")
    assert numbered_chapter("wrap-up.md") is None
    assert numbered_chapter("9.md") is None
