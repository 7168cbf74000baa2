"""Slugs and article paths: direct children ``<articles_dir>/<slug>.md`` only."""

from __future__ import annotations

import pytest

from function.articles.parse import is_article_path, parse_article, slug_for_path
from function.errors import ArticleParseError

from .helpers import article_bytes


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("articles/hello.md", "hello"),
        ("articles/aws-lambda-2024_notes.md", "aws-lambda-2024_notes"),
        ("articles/Mixed.Case~1.md", "Mixed.Case~1"),
        ("articles/" + "a" * 190 + ".md", "a" * 190),
    ],
)
def test_slug_is_the_file_name_without_md(path: str, slug: str) -> None:
    assert slug_for_path(path, "articles") == slug


@pytest.mark.parametrize(
    "path",
    [
        "articles/nested/hello.md",  # not a direct child
        "hello.md",  # outside the folder
        "other/hello.md",
        "articlesx/hello.md",
        "articles/hello.markdown",
        "articles/hello.MD",
        "articles/.md",  # empty slug
        "articles/.hidden.md",
        "articles/" + "a" * 191 + ".md",  # too long
        "articles/hello world.md",  # space
        "articles/héllo.md",  # non-ASCII
        "articles/a?b.md",
        "articles/a#b.md",
        "articles/a%20b.md",
        "articles/a\\b.md",
        "articles/",
    ],
)
def test_other_paths_have_no_slug(path: str) -> None:
    assert slug_for_path(path, "articles") is None


def test_articles_dir_slashes_are_ignored() -> None:
    assert slug_for_path("posts/hello.md", "/posts/") == "hello"


def test_empty_articles_dir_means_the_repository_root() -> None:
    assert slug_for_path("hello.md", "") == "hello"
    assert slug_for_path("articles/hello.md", "") is None


def test_listing_filter_keeps_bad_names_so_they_fail_visibly() -> None:
    assert is_article_path("articles/hello world.md")
    assert is_article_path("articles/~tilde.md")
    assert not is_article_path("articles/sub/x.md")
    assert not is_article_path("articles/readme.txt")
    assert not is_article_path("articles/")


def test_readme_and_dot_or_underscore_names_are_not_articles() -> None:
    for name in ("README.md", "readme.md", "ReadMe.md", ".hidden.md", ".md", "_template.md", "_drafts.md"):
        assert not is_article_path(f"articles/{name}"), name
        assert slug_for_path(f"articles/{name}") is None, name
    assert is_article_path("articles/readme-first.md")


def test_parse_names_a_bad_slug() -> None:
    with pytest.raises(ArticleParseError, match="slug may only contain"):
        parse_article("articles/hello world.md", "0" * 40, article_bytes("title: x"))


def test_parse_names_a_too_long_slug() -> None:
    with pytest.raises(ArticleParseError, match="191 characters"):
        parse_article("articles/" + "a" * 191 + ".md", "0" * 40, article_bytes("title: x"))


def test_parse_refuses_a_nested_path() -> None:
    with pytest.raises(ArticleParseError, match="not an article path"):
        parse_article("articles/a/b.md", "0" * 40, article_bytes("title: x"))
