"""Zenn-style front matter: aliases, emoji, publication times, slug dates, unknown keys."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from function.articles.parse import content_hash, parse_article
from function.errors import ArticleParseError

from .helpers import SHA, article_bytes, parse

ZENN = Path(__file__).resolve().parents[1] / "fixtures" / "zenn" / "articles"


def fails(front_matter: str) -> str:
    with pytest.raises(ArticleParseError) as info:
        parse(front_matter)
    return str(info.value)


def test_zenn_keys_are_read_as_their_blog_api_keys() -> None:
    a = parse('title: "T"\nemoji: "👩‍💻"\ntype: "idea"\ntopics: ["zenn", "Python"]\npublished: true')
    assert (a.publish, a.tags, a.emoji, a.type) == (True, ("Python", "zenn"), "👩‍💻", "idea")
    assert a.warnings == ()


def test_an_alias_that_agrees_with_its_key_is_fine() -> None:
    a = parse("title: T\npublish: true\npublished: true\ntags: [aws]\ntopics: [aws]")
    assert a.publish and a.tags == ("aws",)


@pytest.mark.parametrize(
    ("front_matter", "names"),
    [
        ("title: T\npublish: true\npublished: false", ("'published'", "'publish'")),
        ("title: T\ntags: [a]\ntopics: [b]", ("'topics'", "'tags'")),
        ("title: T\npublished_at: 2024-01-21\ndate: 2024-01-22", ("'published_at'", "'date'")),
    ],
)
def test_an_alias_that_disagrees_fails_naming_both(front_matter: str, names: tuple[str, str]) -> None:
    message = fails(front_matter)
    assert all(name in message for name in names) and "disagree" in message


def test_a_topic_is_one_level() -> None:
    assert "one level" in fails("title: T\ntopics: [tech/aws]")


def test_published_must_be_a_boolean() -> None:
    assert "'published' must be true or false" in fails("title: T\npublished: 'yes please'")


def test_emoji_is_optional_and_null_when_absent() -> None:
    assert parse("title: T").emoji is None
    assert parse("title: T\nemoji: ''").emoji is None


@pytest.mark.parametrize(
    ("value", "utc"),
    [
        ("2024-01-21 09:30", datetime(2024, 1, 21, 0, 30)),  # Zenn's format, read in Asia/Tokyo
        ("'2024-01-21 09:30'", datetime(2024, 1, 21, 0, 30)),
        ("2024-01-21", datetime(2024, 1, 20, 15, 0)),  # a date: 00:00 in Tokyo
        ("2024-01-21 09:30:15", datetime(2024, 1, 21, 0, 30, 15)),  # a YAML timestamp without a zone
        ("2024-01-21T09:30:00+02:00", datetime(2024, 1, 21, 7, 30)),  # a zone is kept
        ("2024-01-21T09:30:00Z", datetime(2024, 1, 21, 9, 30)),
    ],
)
def test_published_at_is_read_in_the_article_zone_unless_it_names_one(value: str, utc: datetime) -> None:
    assert parse(f"title: T\npublished_at: {value}").published_at == utc
    assert parse(f"title: T\ndate: {value}").published_at == utc


def test_the_article_zone_is_a_parameter() -> None:
    data = article_bytes("title: T\npublished_at: 2024-01-21 09:30")
    a = parse_article("articles/x.md", SHA, data, timezone=ZoneInfo("UTC"))
    assert a.published_at == datetime(2024, 1, 21, 9, 30)


@pytest.mark.parametrize("value", ["tomorrow", "'2024-13-01'", "2024-01-21 25:00", "[2024]", "20240121"])
def test_a_publication_time_that_is_not_a_date_fails(value: str) -> None:
    assert "'published_at'" in fails(f"title: T\npublished_at: {value}")


@pytest.mark.parametrize(
    ("slug", "utc"),
    [
        ("2024-01-21-hello", datetime(2024, 1, 20, 15, 0)),
        ("20240121-hello", datetime(2024, 1, 20, 15, 0)),
        ("2024-01-21", datetime(2024, 1, 20, 15, 0)),
        ("hello-2024-01-21", None),
        ("20241399-bad-date", None),
        ("202401210000abcd", None),  # a Zenn random slug that happens to start with digits
    ],
)
def test_a_leading_date_in_the_slug_is_found(slug: str, utc: datetime | None) -> None:
    assert parse_article(f"articles/{slug}.md", SHA, article_bytes("title: T")).slug_date == utc


def test_unknown_keys_are_warnings_not_failures() -> None:
    a = parse("title: T\npublication_name: acme\ntittle: typo")
    assert a.warnings == (
        "unknown front matter key 'publication_name' (ignored)",
        "unknown front matter key 'tittle' (ignored)",
    )


def test_a_draft_as_zenn_new_article_writes_it_parses_with_an_empty_title() -> None:
    a = parse_article("articles/a1b2c3d4e5f6a7.md", SHA, (ZENN / "a1b2c3d4e5f6a7.md").read_bytes())
    assert (a.title, a.publish, a.emoji, a.tags) == ("", False, "🐈", ())
    assert "'title' is required" in fails('title: ""\npublished: true')


def test_crlf_and_bom_zenn_file_with_published_at() -> None:
    data = (ZENN / "zenn-published-at.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data
    a = parse_article("articles/zenn-published-at.md", SHA, data)
    assert a.title == "公開日時つきの記事" and a.publish and a.tags == ("AWS", "python")
    assert a.published_at == datetime(2024, 1, 21, 0, 30) and a.content == "本文です。"


def test_zenns_own_examples_parse_as_published_articles_with_emoji() -> None:
    for name in ("100-example-markdown-guide", "101-example-toc-check", "102-example-footnotes"):
        a = parse_article(f"articles/{name}.md", SHA, (ZENN / f"{name}.md").read_bytes())
        assert a.publish and a.emoji and a.tags and a.warnings == (), name


def test_the_hash_of_an_article_without_the_new_keys_is_unchanged() -> None:
    # A stored article must not look edited after an upgrade: the new fields enter only when given.
    plain, dated = parse("title: T\npublish: true"), parse("title: T\npublish: true\ndate: 2024-01-21")
    before = content_hash(
        title="T", type=None, description=None, thumbnail=None, publish=True, tags=(), content="Body."
    )
    assert plain.content_hash == before != dated.content_hash
