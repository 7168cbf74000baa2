"""What each front matter field means, and the message for each bad input."""

from __future__ import annotations

import pytest

from function.articles.parse import MAX_FILE_BYTES, parse_article
from function.errors import ArticleParseError

from .helpers import SHA, article_bytes, parse


def test_a_full_article_is_read() -> None:
    article = parse(
        "title: Hello\ntype: tech\ndescription: About things\nthumbnail: https://example.com/a.png\n"
        "publish: true\ntags: [tech/aws/lambda, life]",
        "# Heading\n\nText.\n",
    )
    assert article.slug == "hello"
    assert article.path == "articles/hello.md"
    assert article.blob_sha == SHA
    assert article.title == "Hello"
    assert article.type == "tech"
    assert article.description == "About things"
    assert article.thumbnail == "https://example.com/a.png"
    assert article.publish is True
    assert article.tags == ("life", "tech/aws/lambda")
    assert article.content == "# Heading\n\nText."
    assert article.content_html == '<h1 id="heading">Heading</h1>\n<p>Text.</p>\n'


def test_only_title_is_required_and_the_rest_default() -> None:
    article = parse("title: Hello")
    assert (article.type, article.description, article.thumbnail) == (None, None, None)
    assert article.publish is False
    assert article.tags == ()


def test_publish_absent_is_a_draft() -> None:
    assert parse("title: x").publish is False


def test_publish_false_is_a_draft() -> None:
    assert parse("title: x\npublish: false").publish is False


def test_publish_null_is_a_draft() -> None:
    assert parse("title: x\npublish:").publish is False


def test_title_is_stripped() -> None:
    assert parse("title: '  Hello  '").title == "Hello"


def test_blank_optional_fields_are_absent() -> None:
    article = parse("title: x\ntype: ''\ndescription: '   '\nthumbnail:")
    assert (article.type, article.description, article.thumbnail) == (None, None, None)


def test_description_may_span_lines() -> None:
    assert parse("title: x\ndescription: |\n  one\n  two").description == "one\ntwo"


def test_tags_are_normalised_unique_and_sorted() -> None:
    article = parse("title: x\ntags: [' /tech//aws/ ', tech/aws, 'b', '', '/', 'a / b ', b]")
    assert article.tags == ("a/b", "b", "tech/aws")


def test_tags_keep_their_case() -> None:
    assert parse("title: x\ntags: [Tech/AWS]").tags == ("Tech/AWS",)


def test_legacy_category_string_is_a_tag() -> None:
    assert parse("title: x\ncategory: life").tags == ("life",)


def test_legacy_category_list_is_tags() -> None:
    assert parse("title: x\ncategory: [tech/aws, life]").tags == ("life", "tech/aws")


def test_category_and_tags_are_merged() -> None:
    assert parse("title: x\ncategory: tech/aws/\ntags: [tech/aws, tech/python]").tags == (
        "tech/aws",
        "tech/python",
    )


def test_null_tags_are_none() -> None:
    assert parse("title: x\ntags:\ncategory:").tags == ()


def test_unknown_keys_are_ignored() -> None:
    assert parse("title: x\nemoji: 🐍\ntopics: [python]\ndate: 2024-01-01").title == "x"


def test_content_is_the_body_without_front_matter() -> None:
    article = parse("title: x", "\n\n    indented code\n\ntext  \n\n")
    assert article.content == "    indented code\n\ntext"


def test_crlf_line_endings_are_read() -> None:
    data = b"---\r\ntitle: x\r\npublish: true\r\n---\r\nline one\r\nline two\r\n"
    article = parse_article("articles/hello.md", SHA, data)
    assert article.title == "x"
    assert article.publish is True
    assert article.content == "line one\nline two"


def test_a_utf8_bom_is_ignored() -> None:
    assert parse_article("articles/hello.md", SHA, b"\xef\xbb\xbf" + article_bytes("title: x")).title == "x"


def test_front_matter_may_end_with_dots() -> None:
    assert parse_article("articles/hello.md", SHA, b"---\ntitle: x\n...\nbody").content == "body"


def test_a_horizontal_rule_in_the_body_is_kept() -> None:
    assert parse("title: x", "a\n\n---\n\nb").content == "a\n\n---\n\nb"


def test_unicode_is_kept() -> None:
    article = parse("title: 日本語のタイトル\ntags: [技術/AWS]", "本文 🎉")
    assert article.title == "日本語のタイトル"
    assert article.tags == ("技術/AWS",)
    assert article.content == "本文 🎉"


def test_yaml_aliases_are_refused_in_words() -> None:
    # An alias can name one value thousands of times; checking them took seconds (see test_hostile_files).
    message = error_for(article_bytes("base: &t [tech/aws]\ntitle: x\ntags: *t"))
    assert "alias" in message and "write the value out" in message


# --- errors: each names what is wrong -------------------------------------------------------------------


def error_for(data: bytes, path: str = "articles/hello.md") -> str:
    with pytest.raises(ArticleParseError) as info:
        parse_article(path, SHA, data)
    return str(info.value)


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        ("description: no title", "'title' is required"),
        ("title: ''\npublish: true", "'title' is required"),
        ("title: '   '\npublished: true", "'title' is required"),
        ("title:\npublish: true", "'title' is required"),
        ("title: 2024", "'title' must be a string, not a number (2024)"),
        ("title: 1.5", "'title' must be a string, not a number (1.5)"),
        ("title: 2024-01-01", "'title' must be a string, not a date (2024-01-01)"),
        ("title: true", "'title' must be a string, not a boolean (true)"),
        ("title: [a, b]", "'title' must be a string, not a list"),
        ("title: {a: b}", "'title' must be a string, not a mapping"),
        ('title: "a\\nb"', "'title' contains a line break"),
        ('title: "a\\x7fb"', "'title' contains the control character U+007F"),
        # The lone surrogate is removed (with a warning): nothing is left of a published title.
        ('title: "\\ud800"\npublish: true', "'title' is required"),
        ("title: " + "x" * 501, "'title' is 501 characters long; at most 500"),
        ("title: x\ntype: 5", "'type' must be a string, not a number (5)"),
        ("title: x\ndescription: [a]", "'description' must be a string, not a list"),
        ("title: x\nthumbnail: javascript:alert(1)", "'thumbnail' uses a URL scheme that is not allowed"),
        ("title: x\nthumbnail: 'data:text/html,<script>'", "'thumbnail' uses a URL scheme"),
        ("title: x\npublish: 'true'", "'publish' must be true or false, not a string ('true')"),
        ("title: x\npublish: 1", "'publish' must be true or false, not a number (1)"),
        ("title: x\npublish: [true]", "'publish' must be true or false, not a list"),
        ("title: x\ntags: tech/aws", "'tags' must be a list of strings, not a string ('tech/aws')"),
        ("title: x\ntags: {a: b}", "'tags' must be a list of strings, not a mapping"),
        ("title: x\ntags: [tech, 2024]", "'tags' must be a list of strings, but holds a number (2024)"),
        ("title: x\ntags: [[a]]", "'tags' must be a list of strings, but holds a list"),
        ("title: x\ntags: [null]", "'tags' must be a list of strings, but holds null"),
        ("title: x\ncategory: 5", "'category' must be a string or a list of strings, not a number (5)"),
        ("title: x\ncategory: [a, {b: c}]", "'category' must be a list of strings, but holds a mapping"),
        ("title: x\ntags: [" + ", ".join(f"t{i}" for i in range(101)) + "]", "101 tags; at most 100"),
        ("title: x\ntags: [" + "t" * 191 + "]", "a tag is 191 characters long; at most 190"),
        ('title: x\ntags: ["a\\tb"]', "'tags' contains the control character U+0009"),
        ("- title\n- x", "front matter must be a mapping of keys to values, not a list"),
        ("just a string", "front matter must be a mapping of keys to values, not a string"),
        ("title: [unclosed", "front matter is not valid YAML"),
        ("title: x\n  bad: indent", "front matter is not valid YAML"),
        ("title: !!python/object/apply:os.system [ls]", "front matter is not valid YAML"),
        ("title: x\nwhen: 2024-13-45", "front matter has an invalid value"),
        ("title: x\nwhen: !!binary 'a'", "front matter is not valid YAML"),
        ("[" * 5000 + "]" * 5000, "front matter is nested too deeply"),
        ("title: x\nbig: '" + "y" * 70_000 + "'", "front matter is 70016 characters; at most 65536"),
    ],
)
def test_bad_front_matter_is_named(front_matter: str, message: str) -> None:
    assert message in error_for(article_bytes(front_matter))


def test_a_file_without_front_matter_is_refused() -> None:
    assert "no front matter" in error_for(b"# Just Markdown\n")


def test_an_empty_file_is_refused() -> None:
    assert "no front matter" in error_for(b"")


def test_empty_front_matter_lacks_a_title() -> None:
    assert "'title' is required" in error_for(b"---\n---\nbody")


def test_unclosed_front_matter_is_refused() -> None:
    assert "front matter is not closed" in error_for(b"---\ntitle: x\nbody\n")


def test_a_file_that_is_not_utf8_is_refused() -> None:
    assert error_for(b"---\ntitle: caf\xe9\n---\n") == "file is not valid UTF-8 (byte 14)"


def test_a_utf16_file_is_refused() -> None:
    assert "not valid UTF-8" in error_for("---\ntitle: x\n---\n".encode("utf-16"))


def test_a_file_over_the_size_limit_is_refused() -> None:
    data = article_bytes("title: x", "a" * MAX_FILE_BYTES)
    assert error_for(data) == f"file is {len(data)} bytes; at most {MAX_FILE_BYTES} bytes are allowed"


def test_a_five_megabyte_file_is_refused() -> None:
    assert "at most" in error_for(article_bytes("title: x", "word " * 1_000_000))


def test_a_file_whose_html_would_be_too_large_is_refused() -> None:
    # '&' becomes '&amp;' (5 bytes), so a file under the size limit can render above the HTML limit.
    body = "```\n" + "&" * (MAX_FILE_BYTES - 100) + "\n```\n"
    assert "rendered HTML is" in error_for(article_bytes("title: x", body))


def test_a_file_just_under_the_limit_is_read() -> None:
    data = article_bytes("title: x", "a" * (MAX_FILE_BYTES - 100))
    assert len(parse_article("articles/hello.md", SHA, data).content) == MAX_FILE_BYTES - 100
