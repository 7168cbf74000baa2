"""The local chunker: sections by heading, bounded windows with overlap, a version that says how."""

from __future__ import annotations

import pytest

from function.embeddings.chunking import CHUNKER_VERSION, chunk_article, count_tokens
from function.embeddings.port import ArticleText


def test_each_heading_starts_a_chunk_that_knows_it() -> None:
    body = "Intro.\n\n## Install\n\nRun pip.\n\n### Check\n\nRun it."
    chunks = chunk_article(ArticleText("Title", "Desc", body)).chunks

    assert [(c.index, c.heading, c.content) for c in chunks] == [
        (0, "", "Intro."),
        (1, "Install", "Run pip."),
        (2, "Check", "Run it."),
    ]


def test_what_is_embedded_carries_the_title_and_heading() -> None:
    chunks = chunk_article(ArticleText("Title", "Desc", "Intro.\n\n## Install\n\nRun pip.")).chunks

    assert chunks[0].embedding_text == "Title\nDesc\nIntro."
    assert chunks[1].embedding_text == "Title\nInstall\nRun pip."  # the description only once


def test_a_hash_inside_fenced_code_is_not_a_heading() -> None:
    body = "## Shell\n\n```sh\n# a comment\nls\n```\n\nAfter."
    chunks = chunk_article(ArticleText("T", "", body)).chunks

    assert len(chunks) == 1
    assert "# a comment" in chunks[0].content and "After." in chunks[0].content


def test_a_long_section_is_cut_into_bounded_overlapping_windows() -> None:
    words = [f"w{i}" for i in range(250)]
    chunks = chunk_article(ArticleText("T", "", " ".join(words)), max_tokens=100, overlap_tokens=10).chunks

    assert all(count_tokens(c.content) <= 100 for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert chunks[0].content.split()[-10:] == chunks[1].content.split()[:10]  # the overlap
    assert chunks[-1].content.split()[-1] == "w249"  # nothing lost at the end


def test_a_window_ends_at_a_paragraph_break_when_one_is_near() -> None:
    first = " ".join(f"a{i}" for i in range(80))
    second = " ".join(f"b{i}" for i in range(80))
    chunks = chunk_article(
        ArticleText("T", "", f"{first}\n\n{second}"), max_tokens=100, overlap_tokens=0
    ).chunks

    assert chunks[0].content == first
    assert chunks[1].content == second


def test_japanese_is_counted_a_character_a_token() -> None:
    assert count_tokens("東京タワー") == 5
    assert count_tokens("TiDB Serverless 入門") == 4


def test_an_article_without_a_body_is_one_chunk_of_its_title() -> None:
    chunks = chunk_article(ArticleText("Only a title", "and a description", "")).chunks

    assert len(chunks) == 1
    assert chunks[0].embedding_text == "Only a title\nand a description"


def test_the_version_names_the_chunker_and_its_sizes() -> None:
    chunking = chunk_article(ArticleText("T", "", "x"), max_tokens=300, overlap_tokens=30)

    assert chunking.version == f"{CHUNKER_VERSION}:300:30"


def test_an_overlap_as_large_as_a_window_is_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_article(ArticleText("T", "", "x"), max_tokens=10, overlap_tokens=10)
