"""A file whose stored row would reach the database's row limit (6 MiB on TiDB) fails alone, in words
that name its sizes; the table of contents is counted and capped."""

from __future__ import annotations

import pytest

from function.articles.books import parse_chapter
from function.articles.parse import MAX_FILE_BYTES, parse_article
from function.articles.row_size import MAX_ROW_BYTES, MAX_TOC_BYTES, stored_row_bytes, toc_json
from function.errors import ArticleParseError

from .helpers import SHA, article_bytes

MiB = 1024 * 1024


def japanese_headings(size: int = MiB) -> str:
    """Lines of long Japanese h2 headings, ``size`` bytes in all: each heading's id percent-encodes its
    text (9 bytes a character), so the HTML and the table of contents each grow about four times the
    Markdown."""
    lines: list[str] = []
    total = 0
    while total < size - 4000:
        line = f"## {len(lines)}" + "見" * 300
        lines.append(line)
        total += len(line.encode()) + 1
    return "\n".join(lines) + "\n"


def read_error(data: bytes) -> str:
    with pytest.raises(ArticleParseError) as info:
        parse_article("articles/heavy.md", SHA, data)
    return str(info.value)


def test_a_megabyte_of_japanese_headings_fails_with_its_row_size_named() -> None:
    # GIVEN a file under the 1 MiB Markdown cap whose HTML stays under the 4 MiB HTML cap
    data = article_bytes("title: Heavy\npublish: true", japanese_headings())
    assert len(data) <= MAX_FILE_BYTES

    # WHEN it is read THEN it fails, naming the row's size and its parts
    message = read_error(data)
    assert message.startswith("this article would be stored as a row of 9.")
    assert "MB" in message and "table of contents 4." in message
    assert "refuses a row of 6 MiB or more" in message
    assert "the version stored before is kept" in message


def test_a_table_of_contents_over_its_cap_fails_although_the_row_would_fit() -> None:
    # GIVEN 700 KB of plain ASCII headings: a row of about 3 MB, but a table of contents over 1 MiB
    lines = [f"## Heading number {i} " + "word " * 60 for i in range(2_200)]
    data = article_bytes("title: Many headings", "\n".join(lines))

    # WHEN it is read THEN the table of contents' own cap names its size
    message = read_error(data)
    assert message.startswith("this article's table of contents (its h1-h3 headings) is 1.")
    assert f"at most {MAX_TOC_BYTES / 1_000_000:.1f} MB" in message


def test_a_long_ordinary_article_is_read_and_its_row_counted_with_the_toc() -> None:
    # GIVEN an article of 300 sections of prose (about 200 KB)
    body = "\n\n".join(f"## Section {i}\n\n" + "Some prose. " * 50 for i in range(300))
    article = parse_article("articles/long.md", SHA, article_bytes("title: Long", body))

    # THEN it is read, its toc counted in its row, far below the bound
    toc = toc_json(article.toc)
    size = stored_row_bytes(article.content, article.content_html, toc)
    assert len(article.toc) == 300
    assert size > len(article.content.encode()) + len(article.content_html.encode()) + len(toc.encode())
    assert size < MAX_ROW_BYTES // 10


def test_a_chapter_of_japanese_headings_fails_the_same_way() -> None:
    content = article_bytes("title: Heavy chapter", japanese_headings())
    with pytest.raises(ArticleParseError, match=r"this chapter would be stored as a row of 9\.\d MB"):
        parse_chapter("books/b/heavy.md", "heavy", SHA, content)
